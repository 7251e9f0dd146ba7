package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// Requests the shipped policy decides: one it holds for review, one it
// lets through, one it denies (maxTokens past the server's cap), one that
// breaks a structural rule.
const (
	secretParams   = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the admin password?"}}],"maxTokens":100}`
	overCapParams  = `{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":5000}`
	danglingParams = `{"messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"t1","content":[{"type":"text","text":"42"}]}]}],"maxTokens":100}`
)

// limitedProxy is a Proxy over the shipped policies with the given limits
// and review timeout, whose store polls every 20 ms; decisions counts the
// lines of its decision log, one per decision the engine made. Its
// upstreams have the load tools (sample_each).
type limitedProxy struct {
	*Proxy
	log *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (lp limitedProxy) decisions() int {
	lp.log.mu.Lock()
	defer lp.log.mu.Unlock()
	return bytes.Count(lp.log.b.Bytes(), []byte("\n"))
}

// decisionsWith counts the decisions logged that name code.
func (lp limitedProxy) decisionsWith(code string) int {
	lp.log.mu.Lock()
	defer lp.log.mu.Unlock()
	n := 0
	for line := range bytes.Lines(lp.log.b.Bytes()) {
		if bytes.Contains(line, []byte(`"`+code+`"`)) {
			n++
		}
	}
	return n
}

func newLimitedProxy(t *testing.T, lim Limits, reviewTimeout time.Duration, names ...string) limitedProxy {
	t.Helper()
	return newLoggedProxy(t, lim, reviewTimeout, zap.NewNop(), names...)
}

// newLoggedProxy is newLimitedProxy whose service log goes to log.
func newLoggedProxy(t *testing.T, lim Limits, reviewTimeout time.Duration, log *zap.Logger, names ...string) limitedProxy {
	t.Helper()
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	store.PollInterval = 20 * time.Millisecond
	servers := map[string]any{}
	var ups []Upstream
	for _, n := range names {
		servers[n] = map[string]any{"label": "test " + n, "max_tokens": 1000}
		ups = append(ups, defaultOffers(Upstream{Name: n, Label: "test " + n, Command: []string{testUpstream(t)}, Env: map[string]string{peer.LoadEnv: "1"}}))
	}
	dlog := &lockedBuffer{}
	eng, err := engine.New(t.Context(), engine.Config{
		Policy:        engine.PolicyConfig{Dir: "../policies", Timeout: time.Second, Data: map[string]any{"default": "review", "servers": servers}},
		ReviewTimeout: reviewTimeout, DecisionLog: dlog,
	}, store, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return limitedProxy{Proxy: New(Config{Upstreams: ups, HostTimeout: 10 * time.Second, Limits: lim}, eng, store, log), log: dlog}
}

// sampleEach has the upstream behind tool push every params at once and
// returns what each got.
func sampleEach(ctx context.Context, host *mcp.ClientSession, tool string, params ...string) ([]peer.SampleOutcome, error) {
	reqs := make([]json.RawMessage, len(params))
	for i, p := range params {
		reqs[i] = json.RawMessage(p)
	}
	res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"requests": reqs}})
	if err != nil {
		return nil, err
	}
	var out peer.LoadOutcomes
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		return nil, err
	}
	return out.Outcomes, nil
}

// pending lists the reviews now pending.
func pending(t *testing.T, p *Proxy) []review.Item {
	t.Helper()
	items, err := p.store.List(context.Background(), review.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// eventually polls cond until it holds or 20 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 20s: %s", what)
		}
	}
}

// TestFloodRefusedAtOnce: an upstream that pushes twenty requests at once,
// each of which the policy would hold for review, gets three reviews
// (limits.max_pending_reviews) and a -32603 naming a limit for every other
// one, at once: while the three still wait. A request refused while the
// three reviews are open is never decided.
func TestFloodRefusedAtOnce(t *testing.T) {
	p := newLimitedProxy(t, Limits{InFlight: 6, PendingReviews: 3}, time.Minute, "peer")
	var asked atomic.Int32
	host := connectHost(t, p.Proxy, "2025-11-25", samplingHost(&asked))
	params := make([]string, 20)
	for i := range params {
		params[i] = secretParams
	}
	type result struct {
		out []peer.SampleOutcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := sampleEach(t.Context(), host, "sample_each", params...)
		done <- result{out, err}
	}()
	eventually(t, "seventeen refusals and three pending reviews", func() bool {
		refused := p.admit.Refusals("peer", "limits.max_in_flight") + p.admit.Refusals("peer", "limits.max_pending_reviews")
		return refused == 17 && len(pending(t, p.Proxy)) == 3
	})
	for _, it := range pending(t, p.Proxy) {
		if _, err := p.store.Reject(t.Context(), it.ID, "test", "flood"); err != nil {
			t.Fatal(err)
		}
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	var rejected, limited int
	for _, o := range r.out {
		switch {
		case o.Error != nil && o.Error.Code == refusal.CodeUserRejected:
			rejected++
		case o.Error != nil && o.Error.Code == refusal.CodeInternal && strings.HasPrefix(o.Error.Message, "limits.max_") &&
			strings.HasSuffix(o.Error.Message, "reached for server peer") && compact(o.Error.Data) == `{"reason_codes":["limit-reached"]}`:
			limited++
		default:
			t.Errorf("outcome %+v, want a rejection or a limit's -32603", o)
		}
	}
	if rejected != 3 || limited != 17 {
		t.Errorf("%d rejected, %d refused by a limit; want 3 and 17", rejected, limited)
	}
	// A request finding the server's three reviews open is refused before
	// it is decided. One decided while they were being opened is refused
	// when its own review would open: recorded as an error, no review.
	if n, slotless := p.decisions(), p.decisionsWith("review-refused"); n < 3 || n > 6 || slotless != n-3 {
		t.Errorf("%d decisions logged, %d of them refused a review slot; want 3 reviews and the rest (at most 3 more: limits.max_in_flight) refused a slot", n, slotless)
	}
	eventually(t, "every hold released", func() bool { return p.admit.Held("peer") == admit.Claim{} })
}

// TestLimitsPerHost: one server's share within a host session is bounded
// on its own; the refusal names the per-host key and says so.
func TestLimitsPerHost(t *testing.T) {
	p := newLimitedProxy(t, Limits{HostPendingReviews: 1}, time.Minute, "peer")
	var asked atomic.Int32
	host := connectHost(t, p.Proxy, "2025-11-25", samplingHost(&asked))
	done := make(chan []peer.SampleOutcome, 1)
	go func() {
		out, _ := sampleEach(t.Context(), host, "sample_each", secretParams, secretParams)
		done <- out
	}()
	eventually(t, "one pending review and one refusal", func() bool {
		return len(pending(t, p.Proxy)) == 1 && p.admit.Refusals("peer", "limits.max_pending_reviews_per_host") == 1
	})
	if _, err := p.store.Reject(t.Context(), pending(t, p.Proxy)[0].ID, "test", ""); err != nil {
		t.Fatal(err)
	}
	out := <-done
	want := "limits.max_pending_reviews_per_host (1) reached for server peer in this host session"
	if len(out) != 2 || !(hasError(out[0], want) || hasError(out[1], want)) {
		t.Fatalf("outcomes %+v, want one refused with %q", out, want)
	}
}

func hasError(o peer.SampleOutcome, msg string) bool {
	return o.Error != nil && o.Error.Code == refusal.CodeInternal && o.Error.Message == msg
}

// TestHoldsReleasedOnEveryExit: whatever becomes of a sampling request
// (answered, refused by validation or policy, its review expired, its
// upstream cancelling it, the host failing it, a 2026-07-28 round answered
// or handed back and never retried), what it held is given back once its
// answer is sent, and nothing stays in flight.
func TestHoldsReleasedOnEveryExit(t *testing.T) {
	failing := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return nil, errors.New("the model is down")
		},
	}
	for _, tc := range []struct {
		name     string
		era      string // the host's
		protocol string // the upstream's, when not the host's
		opts     *mcp.ClientOptions
		review   time.Duration
		run      func(t *testing.T, p limitedProxy, host *mcp.ClientSession)
	}{
		{"answered", "2025-11-25", "", nil, time.Minute, func(t *testing.T, _ limitedProxy, host *mcp.ClientSession) {
			wantOutcome(t, host, helloParams, 0)
		}},
		{"structural violation", "2025-11-25", "", nil, time.Minute, func(t *testing.T, _ limitedProxy, host *mcp.ClientSession) {
			wantOutcome(t, host, danglingParams, refusal.CodeInvalidParams)
		}},
		{"policy deny", "2025-11-25", "", nil, time.Minute, func(t *testing.T, _ limitedProxy, host *mcp.ClientSession) {
			wantOutcome(t, host, overCapParams, refusal.CodeUserRejected)
		}},
		{"review expired", "2025-11-25", "", nil, 200 * time.Millisecond, func(t *testing.T, _ limitedProxy, host *mcp.ClientSession) {
			wantOutcome(t, host, secretParams, refusal.CodeInternal)
		}},
		{"host error", "2025-11-25", "", failing, time.Minute, func(t *testing.T, _ limitedProxy, host *mcp.ClientSession) {
			wantOutcome(t, host, helloParams, refusal.CodeInternal)
		}},
		{"upstream cancelled", "2025-11-25", "", nil, time.Minute, func(t *testing.T, p limitedProxy, host *mcp.ClientSession) {
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { _, err := sampleEach(ctx, host, "sample_each", secretParams); done <- err }()
			eventually(t, "a pending review", func() bool { return len(pending(t, p.Proxy)) == 1 })
			cancel() // the host cancels its call; the upstream cancels its push
			<-done
		}},
		{"input request answered", "2025-11-25", modernEra, nil, time.Minute, func(t *testing.T, _ limitedProxy, host *mcp.ClientSession) {
			if _, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample_input", Arguments: map[string]any{"params": json.RawMessage(helloParams)}}); err != nil {
				t.Fatal(err)
			}
		}},
		{"input request handed back and retried", modernEra, modernEra, manualOptions(), time.Minute, func(t *testing.T, p limitedProxy, host *mcp.ClientSession) {
			res := askInput(t, host, "sample_input")
			if held := p.admit.Held("peer"); held.InFlight != 1 {
				t.Errorf("while handed back, %+v held; want one request in flight", held)
			}
			if _, err := retry(t.Context(), host, "sample_input", keyOf(res.InputRequests), res.RequestState); err != nil {
				t.Fatal(err)
			}
		}},
		{"input request handed back, never retried", modernEra, modernEra, manualOptions(), time.Minute, func(t *testing.T, p limitedProxy, host *mcp.ClientSession) {
			p.cfg.StateTTL = 200 * time.Millisecond
			askInput(t, host, "sample_input")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newLimitedProxy(t, Limits{}, tc.review, "peer")
			p.cfg.Upstreams[0].Era = tc.protocol
			opts := tc.opts
			if opts == nil {
				var asked atomic.Int32
				opts = samplingHost(&asked)
			}
			host := connectHost(t, p.Proxy, tc.era, opts)
			tc.run(t, p, host)
			eventually(t, "every hold released", p.admit.Idle)
		})
	}
}

func manualOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
}

// wantOutcome pushes params through the upstream's sample tool and checks
// the code of what it got (0: a completion).
func wantOutcome(t *testing.T, host *mcp.ClientSession, params string, code int64) {
	t.Helper()
	out, err := sampleEach(t.Context(), host, "sample_each", params)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case code == 0 && out[0].Error != nil:
		t.Fatalf("upstream got %+v, want a completion", out[0].Error)
	case code != 0 && (out[0].Error == nil || out[0].Error.Code != code):
		t.Fatalf("upstream got %+v, want code %d", out[0], code)
	}
}
