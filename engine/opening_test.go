package engine

import (
	"errors"
	"slices"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

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

// TestReviewSlotOnlyForAReview: Request.ReviewSlot is asked only when a
// review is about to be opened; when it refuses, no review is opened, and
// the decision is recorded as an error carrying the refusal, logged as a
// warning: an upstream at its limit is not a fault of the firewall.
func TestReviewSlotOnlyForAReview(t *testing.T) {
	e, store := newTestEngine(t, Config{})
	core, logs := observer.New(zap.InfoLevel)
	e.log = zap.New(core)
	asked := 0
	full := errors.New("no slot left")
	var refuse error
	slotted := func(params string) Request {
		s := sampling("everything", params)
		s.ReviewSlot = func() error { asked++; return refuse }
		return s
	}
	if v := e.Decide(t.Context(), slotted(textParams("Hello", 100))); v.Outcome != OutcomePass || asked != 0 {
		t.Errorf("a pass: %v, slot asked %d times; want a pass that asks none", v.Outcome, asked)
	}
	if v := e.Decide(t.Context(), slotted(textParams("Hello", 2000))); v.Outcome != OutcomeEscalate || v.ReviewID == "" || asked != 1 {
		t.Errorf("an escalation: %v review %q, slot asked %d times; want it opened after one ask", v.Outcome, v.ReviewID, asked)
	}
	refuse = full
	v := e.Decide(t.Context(), slotted(textParams("Hello", 2000)))
	if v.Outcome != OutcomeError || v.ReviewID != "" || !errors.Is(v.Err, full) || !slices.Contains(v.ReasonCodes(), "review-refused") {
		t.Fatalf("refused a slot: %v %v review %q (%v); want an error carrying the refusal and no review", v.Outcome, v.ReasonCodes(), v.ReviewID, v.Err)
	}
	if d, err := store.Decision(t.Context(), v.DecisionID); err != nil || d.Outcome != "error" || d.ReviewID != "" {
		t.Errorf("recorded %+v, %v; want the error, no review", d, err)
	}
	if items, err := store.List(t.Context(), review.Filter{}); err != nil || len(items) != 1 {
		t.Errorf("%d reviews pending (%v), want the one that had its slot", len(items), err)
	}
	lines := logs.FilterMessage("decision").FilterFieldKey("error").All()
	if len(lines) != 1 || lines[0].Level != zap.WarnLevel {
		t.Errorf("the refused decision was logged %d times (%v); want once, as a warning", len(lines), lines)
	}
	if n := logs.FilterLevelExact(zap.ErrorLevel).Len(); n != 0 {
		t.Errorf("%d lines logged as errors, want none", n)
	}
}
