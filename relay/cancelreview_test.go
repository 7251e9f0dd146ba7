package relay

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestPushCancelledInReview: an upstream that cancels its push while the
// push's request-stage review is pending (it sends notifications/cancelled
// for it) has that review end, abandoned as a cancelled request's, and
// neither the host nor its user is ever asked: pushed to a host that
// receives pushes, and bridged to a 2026-07-28 host, which is handed the
// push only after its request stage.
func TestPushCancelledInReview(t *testing.T) {
	for _, tc := range []struct{ name, era string }{
		{"pushed", "2025-11-25"},
		{"bridged", modernEra},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outcomes := filepath.Join(t.TempDir(), "outcomes")
			p := newTestProxy(t, "peer")
			p.cfg.Upstreams[0].Era = "legacy"
			p.cfg.Upstreams[0].Env = map[string]string{"MCPXFW_PEER_LOG": outcomes}
			var asked atomic.Int32
			host := connectHost(t, p, tc.era, samplingHost(&asked))
			done := make(chan error, 1)
			go func() {
				_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{
					"params": json.RawMessage(secretParams), "cancel_ms": 300}})
				done <- err
			}()
			id := pendingID(t, p.store)
			if got := waitForFile(t, outcomes); !strings.Contains(got, "deadline exceeded") {
				t.Fatalf("the push got %s, want it cancelled by its upstream", got)
			}
			eventually(t, "the review abandoned", func() bool {
				it, err := p.store.Get(t.Context(), id)
				return err == nil && it.State == review.StateAbandoned && it.Note == review.NoteCancelled
			})
			if err := <-done; err != nil {
				t.Fatalf("the host's call: %v", err)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the host was asked %d times for a cancelled request", n)
			}
		})
	}
}

// TestParkedPushCancelled: a bridged push its upstream cancels while it is
// handed to the 2026-07-28 host gets no review of the host's answer: the
// answer, one the policy would hold, is not put to anyone, and the host's
// retry ends with the call.
func TestParkedPushCancelled(t *testing.T) {
	outcomes := filepath.Join(t.TempDir(), "outcomes")
	p, _ := bridgedProxy(t)
	p.cfg.Upstreams[0].Env = map[string]string{"MCPXFW_PEER_LOG": outcomes}
	host := manualHost(t, p)
	args := map[string]any{"params": json.RawMessage(helloParams), "cancel_ms": 300}
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("first call: %+v %v, want input_required with one request", res, err)
	}
	if got := waitForFile(t, outcomes); !strings.Contains(got, "deadline exceeded") {
		t.Fatalf("the push got %s, want it cancelled by its upstream", got)
	}
	secret := &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "test-model",
		Content: []mcp.Content{&mcp.TextContent{Text: "-----BEGIN RSA PRIVATE KEY-----"}}}
	done := make(chan error, 1)
	go func() {
		_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args, RequestState: res.RequestState,
			InputResponses: mcp.InputResponseMap{keyOf(res.InputRequests): secret}})
		done <- err
	}()
	var retried bool
	eventually(t, "the retry answered, no review pending", func() bool {
		select {
		case <-done:
			retried = true
		default:
		}
		return retried && len(pending(t, p)) == 0
	})
}
