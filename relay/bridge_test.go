package relay

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const helloParams = `{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":10}`

// bridgedProxy is a proxy whose one upstream pushes (it is held to the
// legacy revision) behind a 2026-07-28 host, counting the host's calls.
func bridgedProxy(t *testing.T) (*Proxy, *atomic.Int32) {
	p := newTestProxy(t, "peer")
	p.cfg.Upstreams[0].Protocol = "legacy"
	var calls atomic.Int32
	p.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				calls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return p, &calls
}

// TestBridgeRounds: each push of a bridged call is one round with the
// host; pushes that arrive together share a round.
func TestBridgeRounds(t *testing.T) {
	for _, tc := range []struct {
		name            string
		times, together int
		asked, calls    int32
	}{
		{"one push", 1, 1, 1, 2},
		{"three in a row", 3, 1, 3, 4},
		{"three together", 1, 3, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, calls := bridgedProxy(t)
			var asked atomic.Int32
			host := connectHost(t, p, modernEra, samplingHost(&asked))
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{
				"params": json.RawMessage(helloParams), "times": tc.times, "together": tc.together}})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %v", res, err)
			}
			if !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"completion"`) {
				t.Fatalf("no completion: %s", res.Content[0].(*mcp.TextContent).Text)
			}
			if asked.Load() != tc.asked || calls.Load() != tc.calls {
				t.Errorf("host asked %d times in %d calls, want %d in %d", asked.Load(), calls.Load(), tc.asked, tc.calls)
			}
		})
	}
}

// TestBridgeRoundCap: past limits.max_rounds the host's call fails with a
// message that names the limit.
func TestBridgeRoundCap(t *testing.T) {
	p, _ := bridgedProxy(t)
	p.cfg.MaxRounds = 2
	var asked atomic.Int32
	host := connectHost(t, p, modernEra, samplingHost(&asked))
	_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{
		"params": json.RawMessage(helloParams), "times": 3}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != codeInternal || !strings.Contains(we.Message, "limits.max_rounds") {
		t.Fatalf("err = %v, want -32603 naming limits.max_rounds", err)
	}
	if asked.Load() != 2 {
		t.Errorf("host asked %d times, want 2", asked.Load())
	}
}

// TestBridgeExpiry: a host that never retries leaves nothing behind. The
// parked push gets -32603 naming expiry, the bridged session is closed,
// and a late retry is refused.
func TestBridgeExpiry(t *testing.T) {
	log := filepath.Join(t.TempDir(), "outcomes")
	t.Setenv("MCPXFW_PEER_LOG", log)
	p, _ := bridgedProxy(t)
	p.cfg.StateTTL = 300 * time.Millisecond
	host := connectHost(t, p, modernEra, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	args := map[string]any{"params": json.RawMessage(helloParams)}
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("first call: %+v %v, want input_required with one request", res, err)
	}
	outcome := waitForFile(t, log)
	if !strings.Contains(outcome, `"code":-32603`) || !strings.Contains(outcome, "expired after 300ms") {
		t.Fatalf("the push got %s, want -32603 naming expiry", outcome)
	}
	if n := len(p.bridges.parked); n != 0 {
		t.Errorf("%d bridges still parked", n)
	}
	_, err = host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{keyOf(res.InputRequests): hiResult()}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != codeInvalidParams {
		t.Fatalf("late retry: %v, want -32602", err)
	}
}

func waitForFile(t *testing.T, path string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return string(b)
		}
	}
	t.Fatalf("%s never written", path)
	return ""
}

func keyOf(m mcp.InputRequestMap) string {
	for k := range m {
		return k
	}
	return ""
}

func hiResult() *mcp.CreateMessageWithToolsResult {
	return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "test-model", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}
}
