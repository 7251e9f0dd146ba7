package relay

import (
	"context"
	"database/sql"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// sampleInBackground has the upstream push one sampling request with
// params, and hands over what it got once its call returns.
func sampleInBackground(t *testing.T, host *mcp.ClientSession, params string) <-chan *peer.SampleOutcome {
	done := make(chan *peer.SampleOutcome, 1)
	go func() {
		res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{
			"params": json.RawMessage(params)}})
		var got peer.SampleOutcome
		if err == nil {
			err = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got)
		}
		if err != nil {
			t.Error(err)
		}
		done <- &got
	}()
	return done
}

// TestApprovalNotDeliveredUnrecorded: an approved request reaches the host
// only once the queue has recorded it delivered. When that record fails
// (the database is away, or another replica's sweep already failed the
// item because this replica's lease ran out: the queue says it was never
// delivered), the request is refused instead of sent: a delivery the
// queue does not record, or records as failed, would let one request be
// answered while its trail says otherwise.
func TestApprovalNotDeliveredUnrecorded(t *testing.T) {
	p := newTestProxy(t, "peer")
	var asked atomic.Int32
	host := connectHost(t, p, "2025-11-25", &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
		},
	})
	done := sampleInBackground(t, host, `{"messages":[{"role":"user","content":{"type":"text","text":"the admin password?"}}],"maxTokens":10}`)
	id := pendingID(t, p.store)
	// The queue refuses to record any delivery: a write that fails.
	db, err := sql.Open("sqlite", p.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER refuse_delivery BEFORE UPDATE OF state ON items
		WHEN NEW.state = 'delivered' BEGIN SELECT RAISE(ABORT, 'delivery not recorded'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.store.Approve(t.Context(), id, "alice", ""); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.Error == nil || got.Completion != nil || asked.Load() != 0 {
		t.Fatalf("upstream got %+v and the host was asked %d times; want an error and no request to the host", got, asked.Load())
	}
}
