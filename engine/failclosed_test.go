package engine

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// inlinePolicy writes module as mcpxfw/main.rego of a fresh policy dir.
func inlinePolicy(t *testing.T, module string) string {
	t.Helper()
	dir := t.TempDir()
	writePolicyFile(t, filepath.Join(dir, "mcpxfw", "main.rego"), "package mcpxfw\n\n"+module+"\n")
	return dir
}

// Every way a policy can fail to decide is an error verdict through the
// whole engine: never a pass, never a blocker (a deny must stay
// distinguishable from "could not decide"), and recorded as such.
func TestDecideFailsClosed(t *testing.T) {
	tests := []struct {
		name, module string
		timeout      time.Duration
	}{
		{"conflict", "decision := {\"outcome\": o, \"deny\": [], \"review\": []}\n\no := \"permit\" if input\n\no := \"review\" if input", 0},
		{"undefined", `decision := {"outcome": "permit", "deny": [], "review": []} if input.never_set`, 0},
		{"outcome 42", `decision := {"outcome": 42, "deny": [], "review": []}`, 0},
		{"unknown word", `decision := {"outcome": "allow", "deny": [], "review": []}`, 0},
		{"wrong type", `decision := {"outcome": "deny", "deny": "no-tools", "review": []}`, 0},
		{"not an object", `decision := ["permit"]`, 0},
		{"builtin error", `decision := {"outcome": "permit", "deny": [], "review": []} if to_number(input.stage) > 0`, 0},
		{"timeout", "decision := {\"outcome\": \"permit\", \"deny\": [], \"review\": []} if {\n\tsome i in numbers.range(1, 100000)\n\tsome j in numbers.range(1, 100000)\n\ti * j < 0\n}", 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, store := newTestEngine(t, Config{Policy: PolicyConfig{Dir: inlinePolicy(t, tt.module), Timeout: tt.timeout}})
			v := e.Decide(t.Context(), sampling("notes", textParams("hello", 10)))
			if v.Outcome != OutcomeError || v.Err == nil || v.ReasonCodes()[0] != "policy-error" {
				t.Fatalf("got %v %v (%v), want error [policy-error]", v.Outcome, v.ReasonCodes(), v.Err)
			}
			if tt.timeout > 0 && !errors.Is(v.Err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want a deadline", v.Err)
			}
			if d, err := store.Decision(t.Context(), v.DecisionID); err != nil || d.Outcome != "error" {
				t.Errorf("recorded %+v, %v; want outcome error", d, err)
			}
		})
	}
}

// A policy that decides "review" for a request a person already approved
// cannot be satisfied by anyone; that is an error, not a second review.
func TestReconsiderReviewAgainIsError(t *testing.T) {
	dir := inlinePolicy(t, `decision := {"outcome": "review", "deny": [], "review": [{"code": "always", "message": "m"}]}`)
	e, _ := newTestEngine(t, Config{Policy: PolicyConfig{Dir: dir}})
	v := e.Reconsider(t.Context(), sampling("notes", textParams("hello", 10)), nil, Approval{DecisionID: "dc-1", By: "alice"})
	if v.Outcome != OutcomeError {
		t.Fatalf("got %v %v, want error", v.Outcome, v.ReasonCodes())
	}
}

// The input is converted as the policy reads it; a value OPA cannot convert
// is a policy error, not a crash and not a pass.
func TestPolicyFailClosedUnconvertibleInput(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: inlinePolicy(t, `decision := {"outcome": "permit", "deny": [], "review": []} if input.x`)})
	got, err := p.Evaluate(t.Context(), map[string]any{"x": make(chan int)})
	if err == nil || got.Outcome != OutcomeError {
		t.Fatalf("Evaluate = %+v, %v; want an error", got, err)
	}
}
