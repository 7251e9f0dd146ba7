package engine

import (
	"slices"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestAwaitAnswerOpensTheReview: a request the policy passes but that an
// operator must answer (AwaitAnswer) is held in a review the engine opens
// with its decision, recorded as an escalation under operator-answer, and
// heard of by the store's Opened hook like any review. The policy acts
// first: a request it denies or holds is decided as it says, and the
// request's approval (Reconsider) and its result stage are not held again.
func TestAwaitAnswerOpensTheReview(t *testing.T) {
	e, store := newTestEngine(t, Config{})
	var heard []review.Opened
	store.Opened = func(o review.Opened) { heard = append(heard, o) }
	answer := func(params string) Request {
		s := sampling("everything", params)
		s.AwaitAnswer = true
		return s
	}
	v := e.Decide(t.Context(), answer(textParams("Hello", 100)))
	if v.Outcome != OutcomeEscalate || !slices.Equal(v.ReasonCodes(), []string{ReasonAwaitAnswer}) || v.ReviewID == "" {
		t.Fatalf("got %v %v review %q (%v), want an escalation under %s", v.Outcome, v.ReasonCodes(), v.ReviewID, v.Err, ReasonAwaitAnswer)
	}
	if d, err := store.Decision(t.Context(), v.DecisionID); err != nil || d.Outcome != "escalate" || d.ReviewID != v.ReviewID {
		t.Errorf("recorded %+v, %v; want the escalation with its review", d, err)
	}
	if len(heard) != 1 || heard[0].ReviewID != v.ReviewID || !slices.Equal(heard[0].Codes, []string{ReasonAwaitAnswer}) {
		t.Errorf("the store's hook heard %+v, want review %s once", heard, v.ReviewID)
	}
	for _, tc := range []struct {
		name   string
		v      Verdict
		want   Outcome
		reason string
	}{
		{"denied", e.Decide(t.Context(), answer(toolParams)), OutcomeBlocker, "no-tools"},
		{"held by the policy", e.Decide(t.Context(), answer(textParams("Hello", 2000))), OutcomeEscalate, "long"},
		{"approved", e.Reconsider(t.Context(), answer(textParams("Hello", 100)), nil, Approval{DecisionID: v.DecisionID, By: "alice"}), OutcomePass, ""},
		{"result", e.Check(t.Context(), answer(textParams("Hello", 100)), []byte(`{"role":"assistant","model":"m","content":{"type":"text","text":"hi"}}`)), OutcomePass, ""},
	} {
		codes := tc.v.ReasonCodes()
		if tc.v.Outcome != tc.want || (tc.reason != "" && !slices.Equal(codes, []string{tc.reason})) || slices.Contains(codes, ReasonAwaitAnswer) {
			t.Errorf("%s: got %v %v, want %v %s", tc.name, tc.v.Outcome, codes, tc.want, tc.reason)
		}
	}
}
