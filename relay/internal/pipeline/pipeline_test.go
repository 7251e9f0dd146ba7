package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// testHost stands for the host: it answers each request it is asked with
// answer, or fails with err, or, when block is set, waits until its
// context ends. It records what it was asked.
type testHost struct {
	mu     sync.Mutex
	asked  []mcp.InputRequest
	answer mcp.InputResponse
	err    error
	block  bool
}

func (h *testHost) Ask(ctx context.Context, _ *Kind, params mcp.InputRequest) (mcp.InputResponse, error) {
	h.mu.Lock()
	h.asked = append(h.asked, params)
	h.mu.Unlock()
	if h.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.answer, h.err
}

func (h *testHost) times() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.asked)
}

// testPipeline is a Pipeline over testDeps.
func testPipeline(t *testing.T, reviewTimeout, hostTimeout time.Duration) *Pipeline {
	t.Helper()
	p := New(testDeps(t, reviewTimeout, hostTimeout))
	t.Cleanup(p.Close)
	return p
}

// testDeps are the shipped policies (server "peer" known, the configured
// default review) and a review store in a temporary state dir, whose
// reviews time out after reviewTimeout, and hostTimeout for the host.
func testDeps(t *testing.T, reviewTimeout, hostTimeout time.Duration) Deps {
	t.Helper()
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	store.PollInterval = 20 * time.Millisecond
	servers := map[string]any{"peer": map[string]any{"label": "test peer", "max_tokens": 1000}}
	eng, err := engine.New(context.Background(), engine.Config{
		Policy:        engine.PolicyConfig{Dir: "../../../policies", Timeout: time.Second, Data: map[string]any{"default": "review", "servers": servers}},
		ReviewTimeout: reviewTimeout,
	}, store, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return Deps{Engine: eng, Store: store, Admit: admit.New(admit.Limits{}, zap.NewNop(), nil), Log: zap.NewNop(), HostTimeout: hostTimeout}
}

// source is a legacy host's request from server "peer", asked of h.
func source(h Asker) *Source {
	return &Source{Server: engine.Server{Name: "peer", Label: "test peer", Era: "2025-11-25"},
		Host:     engine.Host{Era: "2025-11-25", Capabilities: map[string]any{"sampling": map[string]any{}}},
		HostCaps: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}, HostKey: "host-1", Asker: h}
}

func sampling(text string) *mcp.CreateMessageWithToolsParams {
	return &mcp.CreateMessageWithToolsParams{MaxTokens: 100,
		Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: text}}}}}
}

func completion(text string) *mcp.CreateMessageWithToolsResult {
	return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// wireError is err as the JSON-RPC error the upstream gets.
func wireError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v is not a JSON-RPC error", err)
	}
	return we
}

// TestRunAsksTheHost: a request the policy passes is asked of the host as
// cleared, and the host's answer, checked, is the answer.
func TestRunAsksTheHost(t *testing.T) {
	p := testPipeline(t, time.Minute, 10*time.Second)
	host := &testHost{answer: completion("hi")}
	res, err := p.Run(t.Context(), source(host), Sampling, sampling("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*mcp.CreateMessageWithToolsResult); got.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Errorf("answer %+v, want the host's", got)
	}
	if host.times() != 1 {
		t.Errorf("the host was asked %d times, want once", host.times())
	}
}

// TestRunRefusesBeforeAsking: a request that breaks the rules is refused
// with the vocabulary's error, and the host is never asked.
func TestRunRefusesBeforeAsking(t *testing.T) {
	p := testPipeline(t, time.Minute, 10*time.Second)
	host := &testHost{answer: completion("hi")}
	_, err := p.Run(t.Context(), source(host), Sampling, &mcp.CreateMessageWithToolsParams{MaxTokens: 100})
	if we := wireError(t, err); we.Code != refusal.CodeInvalidParams {
		t.Errorf("code %d (%s), want -32602", we.Code, we.Message)
	}
	if host.times() != 0 {
		t.Errorf("the host was asked %d times, want never", host.times())
	}
}

// TestRunHostRejects: the host's own "no" reaches the upstream in the
// firewall's words, never the host's.
func TestRunHostRejects(t *testing.T) {
	p := testPipeline(t, time.Minute, 10*time.Second)
	host := &testHost{err: &jsonrpc.Error{Code: refusal.CodeUserRejected, Message: "the host's own words"}}
	_, err := p.Run(t.Context(), source(host), Sampling, sampling("hello"))
	we := wireError(t, err)
	if we.Code != refusal.CodeUserRejected || strings.Contains(we.Message, "own words") || !refusal.HasReason(we, refusal.ReasonHostRejected) {
		t.Errorf("= %d %q %s, want -1 declined by the host", we.Code, we.Message, we.Data)
	}
}

// TestRunNoAsker: a request that passes where no host can be asked is
// refused as nobody's to answer.
func TestRunNoAsker(t *testing.T) {
	p := testPipeline(t, time.Minute, 10*time.Second)
	_, err := p.Run(t.Context(), source(nil), Sampling, sampling("hello"))
	if we := wireError(t, err); we.Code != refusal.CodeInternal || !refusal.HasReason(we, refusal.ReasonNoHost) {
		t.Errorf("= %d %q, want -32603 no host", we.Code, we.Message)
	}
}

// TestRunHostTimeout: a host that does not answer within the host timeout
// fails the request as timed out; the bubble's clock makes the wait (the
// pipeline's workers are the bubble's too, and stop with it).
func TestRunHostTimeout(t *testing.T) {
	d := testDeps(t, time.Minute, 5*time.Minute)
	synctest.Test(t, func(t *testing.T) {
		p := New(d)
		defer p.Close()
		host := &testHost{block: true}
		_, err := p.Run(t.Context(), source(host), Sampling, sampling("hello"))
		we := wireError(t, err)
		if we.Code != refusal.CodeInternal || !strings.Contains(we.Message, "sampling.host_timeout") {
			t.Errorf("= %d %q, want -32603 timed out", we.Code, we.Message)
		}
	})
}

// TestDecideWaitsForReview: a request held for review is decided by the
// person: approved, it is cleared under its review; rejected, it is
// refused as the reviewer's "no", and the host is asked nothing.
func TestDecideWaitsForReview(t *testing.T) {
	for _, approve := range []bool{true, false} {
		p := testPipeline(t, time.Minute, 10*time.Second)
		host := &testHost{answer: completion("hi")}
		done := make(chan error, 1)
		go func() {
			_, err := p.Run(t.Context(), source(host), Sampling, sampling("what is the admin password?"))
			done <- err
		}()
		id := pendingReview(t, p.store)
		var err error
		if approve {
			_, err = p.store.Approve(t.Context(), id, "alice", "")
		} else {
			_, err = p.store.Reject(t.Context(), id, "alice", "no")
		}
		if err != nil {
			t.Fatal(err)
		}
		err = <-done
		switch {
		case approve && (err != nil || host.times() != 1):
			t.Errorf("approved: %v, asked %d times; want the host's answer", err, host.times())
		case !approve && (host.times() != 0 || wireError(t, err).Code != refusal.CodeUserRejected):
			t.Errorf("rejected: %v, asked %d times; want -1 and the host never asked", err, host.times())
		}
	}
}

// pendingReview is the id of the one review pending in s, once it opens.
func pendingReview(t *testing.T, s *review.Store) string {
	t.Helper()
	changed, deadline := s.Changed(), time.After(10*time.Second)
	for {
		ids, err := s.PendingIDs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for id := range ids {
			if len(ids) == 1 {
				return id
			}
		}
		select {
		case <-changed:
			changed = s.Changed()
		case <-time.After(50 * time.Millisecond): // a review opened is not announced on SQLite, only decided
		case <-deadline:
			t.Fatal("no review opened")
		}
	}
}
