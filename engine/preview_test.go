package engine

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// Preview decides exactly as Decide does and leaves no trace: no decision,
// no usage, no review item, no decision-log line.
func TestPreviewRecordsNothing(t *testing.T) {
	var dlog bytes.Buffer
	e, store := newTestEngine(t, Config{DecisionLog: &dlog})
	s := sampling("everything", textParams("Hello", 2000))
	v, input := e.Preview(t.Context(), StageRequest, s, nil, nil)
	if v.Outcome != OutcomeEscalate || v.ReviewID != "" {
		t.Fatalf("preview %v review %q, want an escalation without a review", v.Outcome, v.ReviewID)
	}
	if _, err := store.Decision(t.Context(), v.DecisionID); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("preview recorded its decision: %v", err)
	}
	if items, err := store.List(t.Context(), review.Filter{All: true}); err != nil || len(items) != 0 {
		t.Errorf("preview queued %v, %v", items, err)
	}
	if u := usageOf(t, store, "everything"); u != (review.Usage{}) {
		t.Errorf("preview charged %+v", u)
	}
	if dlog.Len() != 0 {
		t.Error("preview wrote to the decision log")
	}
	decided := e.Decide(t.Context(), s)
	if decided.Outcome != v.Outcome || !cmp.Equal(decided.Reasons, v.Reasons) {
		t.Errorf("Decide %v %v, Preview %v %v", decided.Outcome, decided.Reasons, v.Outcome, v.Reasons)
	}
	if input["stage"] != "request" || input["usage"].(map[string]any)["hour"] == nil {
		t.Errorf("preview input %v", input)
	}
}

// Preview's usage, when given, is what the policy sees instead of the store.
func TestPreviewWithUsage(t *testing.T) {
	e, _ := newTestEngine(t, Config{})
	u := Usage{"minute": {Requests: 10}, "hour": {Requests: 10, Tokens: 19900}}
	v, _ := e.Preview(t.Context(), StageRequest, sampling("github-mcp", textParams("Review this", 500)), nil, u)
	if v.Outcome != OutcomeBlocker || v.ReasonCodes()[0] != "budget-exhausted" {
		t.Errorf("got %v %v, want blocker [budget-exhausted]", v.Outcome, v.ReasonCodes())
	}
}
