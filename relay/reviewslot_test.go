package relay

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// passParams is a request the shipped policies let through, whose
// completion they let through too.
const passParams = `{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":100}`

// answeringTogether is a host that holds every sampling request until n
// have reached it, then answers them all at once.
func answeringTogether(n int32, asked *atomic.Int32) *mcp.ClientOptions {
	all := make(chan struct{})
	var once sync.Once
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		CreateMessageWithToolsHandler: func(ctx context.Context, _ *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			if asked.Add(1) >= n {
				once.Do(func() { close(all) })
			}
			select {
			case <-all:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "test-model", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
		},
	}
}

// TestAnswersTogetherAllDelivered: under the default limits, an upstream
// pushes as many sampling requests at once as one host session may have in
// flight (limits.max_in_flight_per_host, 24) and the host answers them all
// at once. Each is let through at both stages and opens no review, so
// each completion reaches the upstream: a decision that opens no review
// takes no review slot (limits.max_pending_reviews_per_host is 16).
func TestAnswersTogetherAllDelivered(t *testing.T) {
	const n = 24
	p := newLimitedProxy(t, Limits{}, time.Minute, "peer")
	var asked atomic.Int32
	host := connectHost(t, p.Proxy, "2025-11-25", answeringTogether(n, &asked))
	params := make([]string, n)
	for i := range params {
		params[i] = passParams
	}
	out, err := sampleEach(t.Context(), host, "sample_each", params...)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o.Error != nil {
			t.Errorf("request %d: %d %s", i, o.Error.Code, o.Error.Message)
		}
	}
	if asked.Load() != n {
		t.Errorf("the host was asked %d times, want %d", asked.Load(), n)
	}
	if items := pending(t, p.Proxy); len(items) != 0 {
		t.Errorf("%d reviews pending, want none", len(items))
	}
}

// TestResultReviewWithoutSlotRefused: a completion whose check would open
// a review while the server's only review slot is held by another review
// is refused with the limit's -32603, as a request is, and opens none;
// the decision is recorded, as an error. Its request was let through
// before that review opened.
func TestResultReviewWithoutSlotRefused(t *testing.T) {
	p := newLimitedProxy(t, Limits{PendingReviews: 1}, time.Minute, "peer")
	asked, answer := make(chan struct{}, 1), make(chan struct{})
	host := connectHost(t, p.Proxy, "2025-11-25", &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			asked <- struct{}{}
			<-answer
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "test-model",
				Content: []mcp.Content{&mcp.TextContent{Text: "-----BEGIN RSA PRIVATE KEY-----"}}}, nil
		},
	})
	done := make(chan []peer.SampleOutcome, 1)
	go func() {
		out, err := sampleEach(t.Context(), host, "sample_each", passParams)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-asked
	go func() { _, _ = sampleEach(t.Context(), host, "sample_each", secretParams) }()
	eventually(t, "the second request's review", func() bool { return len(pending(t, p.Proxy)) == 1 })
	held := pending(t, p.Proxy)[0].ID
	close(answer)
	out := <-done
	if want := "limits.max_pending_reviews (1) reached for server peer"; len(out) != 1 || !hasError(out[0], want) {
		t.Fatalf("upstream got %+v, want %q", out, want)
	}
	if items := pending(t, p.Proxy); len(items) != 1 || items[0].ID != held {
		t.Errorf("pending %+v, want only %s", items, held)
	}
	if n := p.decisionsWith("review-refused"); n != 1 {
		t.Errorf("%d decisions record a refused review slot, want 1", n)
	}
}
