package relay

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestApprovalCoversItsOwnItem: an upstream asks two things together, in
// one round where the host's era allows: one a person must approve (code
// test-review-always), and one that passes, whose answer then raises the
// same code. The person's approval of the first covers that code for the
// first item only: the second's answer is held for a review of its own,
// and rejecting it keeps it from the upstream. In every era pairing,
// through the bridge too.
func TestApprovalCoversItsOwnItem(t *testing.T) {
	const (
		held  = `{"message":"review always","requestedSchema":` + nameSchema + `}`
		quiet = `{"message":"what is your name?","requestedSchema":` + nameSchema + `}`
	)
	for _, cell := range inputCells {
		t.Run(cell.name, func(t *testing.T) {
			p := newInputProxy(t, cell.protocol)
			h := &inputHost{answer: func(ep *mcp.ElicitParams) *mcp.ElicitResult {
				name := "Ada"
				if ep.Message != "review always" {
					name = "Eve" // the code the person approved, for the other item
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}
			}}
			cs := h.connect(t, p, cell.host)
			decided := make(chan string, 1)
			go func() {
				// Both are asked at once, so the second's answer may be
				// held before the first's request: each is found by its stage.
				first := pendingAt(t, p.store, review.StageRequest)
				if _, err := p.store.Approve(context.Background(), first, "alice", ""); err != nil {
					t.Error(err)
				}
				second := pendingAt(t, p.store, review.StageResult)
				if _, err := p.store.Reject(context.Background(), second, "alice", "not for that one"); err != nil {
					t.Error(err)
				}
				decided <- second
			}()
			res, err := h.call(t.Context(), cs, "ask_pair", map[string]any{"first": json.RawMessage(held), "second": json.RawMessage(quiet),
				"input": cell.tool == "ask_input"})
			second := <-decided
			if err == nil && strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Eve") {
				t.Errorf("the upstream got the second item's answer: %s", res.Content[0].(*mcp.TextContent).Text)
			}
			it, gerr := p.store.Get(t.Context(), second)
			if gerr != nil || it.Stage != review.StageResult || it.State != review.StateRejected {
				t.Errorf("second review: stage %q, state %q, %v; want the second item's answer held at the result stage, rejected", it.Stage, it.State, gerr)
			}
		})
	}
}

// pendingAt waits for a pending review at stage and returns its id.
func pendingAt(t *testing.T, s *review.Store, stage string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		items, err := s.List(t.Context(), review.Filter{})
		if err != nil {
			t.Error(err)
			return ""
		}
		for _, it := range items {
			if it.Stage == stage {
				return it.ID
			}
		}
	}
	t.Errorf("no pending review at the %s stage", stage)
	return ""
}
