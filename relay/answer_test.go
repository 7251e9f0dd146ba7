package relay

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestOperatorAnswerOffersSampling: with operator answers on, an upstream
// is offered sampling although the host cannot sample; someone can answer.
func TestOperatorAnswerOffersSampling(t *testing.T) {
	p := newTestProxy(t, "peer")
	p.cfg.Upstreams[0].OperatorAnswer = true
	host := connectHost(t, p, "2025-11-25", nil)
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "client_info", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var got peer.ClientInfo
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	if caps := compact(got.Capabilities); caps != `{"sampling":{}}` {
		t.Errorf("capabilities offered upstream = %s, want sampling without tools or context", caps)
	}
}

// TestAnswerRefusedWhereOff: serve is authoritative. An answer written
// through a CLI with another config, for a server whose serve does not
// allow operator answers, is not delivered: the item fails and the
// upstream gets -32603, not the answer.
func TestAnswerRefusedWhereOff(t *testing.T) {
	p := newTestProxy(t, "peer")
	host := connectHost(t, p, "2025-11-25", &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			t.Error("the host was asked")
			return nil, nil
		},
	})
	done := sampleInBackground(t, host, `{"messages":[{"role":"user","content":{"type":"text","text":"the admin password?"}}],"maxTokens":10}`)
	id := pendingID(t, p.store)
	completion := json.RawMessage(`{"role":"assistant","model":"human","content":{"type":"text","text":"hi"}}`)
	if _, err := p.store.Answer(t.Context(), id, "alice", "", completion); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.Error == nil || got.Error.Code != -32603 || got.Completion != nil {
		t.Fatalf("upstream got %+v, want -32603 and no completion", got)
	}
	if it, _ := p.store.Get(t.Context(), id); it.State != review.StateFailed {
		t.Errorf("item is %s, want failed", it.State)
	}
}

// pendingID waits for the first pending review.
func pendingID(t *testing.T, s *review.Store) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		items, err := s.List(t.Context(), review.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) > 0 {
			return items[0].ID
		}
	}
	t.Fatal("no pending review")
	return ""
}
