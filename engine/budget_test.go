package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// budgetData gives github-mcp and notes the same hourly budget of 5000
// tokens and no burst limit.
var budgetData = map[string]any{
	"default": "review",
	"servers": map[string]any{
		"github-mcp": map[string]any{"max_tokens": 4096, "budget": map[string]any{"hourly_tokens": 5000}},
		"notes":      map[string]any{"max_tokens": 4096, "budget": map[string]any{"hourly_tokens": 5000}},
	},
}

// The acceptance test for budgets: permitted requests spend github-mcp's
// hourly budget, each its prompt ("Summarise this diff", 5 tokens) and its
// maxTokens, the next one is denied with the budget's reason, and notes,
// with a budget of its own, is unaffected.
func TestBudgetSpentThenDenied(t *testing.T) {
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: budgetData}})
	s := sampling("github-mcp", textParams("Summarise this diff", 995))
	for i := range 5 {
		if v := e.Decide(t.Context(), s); v.Outcome != OutcomePass {
			t.Fatalf("request %d: %v %v, want pass", i+1, v.Outcome, v.ReasonCodes())
		}
	}
	v := e.Decide(t.Context(), s)
	if v.Outcome != OutcomeBlocker || !slices.Equal(v.ReasonCodes(), []string{"budget-exhausted"}) {
		t.Fatalf("sixth request: %v %v, want blocker [budget-exhausted]", v.Outcome, v.ReasonCodes())
	}
	want := "server github-mcp has used 5000 of its 5000 tokens this hour; this request may take 1000 more (5 to read, up to 995 to write)"
	if v.Reasons[0].Message != want {
		t.Errorf("reason %q, want %q", v.Reasons[0].Message, want)
	}
	if v := e.Decide(t.Context(), sampling("notes", textParams("Summarise my notes", 995))); v.Outcome != OutcomePass {
		t.Errorf("notes: %v %v, want pass", v.Outcome, v.ReasonCodes())
	}
	hour := usageOf(t, store, "github-mcp")
	if hour.Requests != 6 || hour.Tokens != 5000 || hour.RequestedTokens != 5*995 {
		t.Errorf("github-mcp hour usage %+v: want 6 requests, 5000 tokens (a denied request reserves nothing)", hour)
	}
}

// decideAndCheck decides s, then checks result against it as the relay
// does, the request stage's reservation handed to the result stage.
func decideAndCheck(t *testing.T, e *Engine, s Request, result string) {
	t.Helper()
	v := e.Decide(t.Context(), s)
	if v.Outcome != OutcomePass {
		t.Fatalf("request: %v %v", v.Outcome, v.ReasonCodes())
	}
	s.Reservation = v.Reservation
	if v := e.Check(t.Context(), s, []byte(result)); v.Outcome != OutcomePass {
		t.Fatalf("result: %v %v", v.Outcome, v.ReasonCodes())
	}
}

// Completions settle what their requests reserved: the prompt stays
// charged, the maxTokens becomes what the model returned, so a server
// whose answers are short can keep going.
func TestBudgetChargesWhatCompletionsReturn(t *testing.T) {
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: budgetData}})
	s := sampling("github-mcp", textParams("Summarise this diff", 1000))
	for range 8 {
		decideAndCheck(t, e, s, `{"role":"assistant","model":"m","content":{"type":"text","text":"Looks good to me."},"stopReason":"endTurn"}`)
	}
	hour := usageOf(t, store, "github-mcp")
	want := review.Usage{Requests: 8, RequestedTokens: 8000, ReturnedTokens: 8 * 5, Tokens: 8 * (5 + 5)}
	if hour != want {
		t.Errorf("hour usage %+v, want %+v", hour, want)
	}
}

// A result that reports its own usage is charged what it says, beside its
// prompt.
func TestBudgetUsesReportedTokens(t *testing.T) {
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: budgetData}})
	decideAndCheck(t, e, sampling("github-mcp", textParams("Summarise this diff", 1000)), `{"role":"assistant","model":"m","content":{"type":"text","text":"ok"},
		"_meta":{"usage":{"output_tokens":321}}}`)
	if hour := usageOf(t, store, "github-mcp"); hour.ReturnedTokens != 321 || hour.Tokens != 5+321 {
		t.Errorf("hour usage %+v, want 321 returned and charged with the prompt's 5", hour)
	}
}

// Reconsidering an approved request is the same request deciding again:
// it neither counts nor reserves a second time.
func TestBudgetReconsiderChargesNothing(t *testing.T) {
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: budgetData}})
	s := sampling("notes", textParams("what is the admin password?", 1000))
	v := e.Decide(t.Context(), s)
	if v.Outcome != OutcomeEscalate {
		t.Fatalf("got %v %v, want escalate", v.Outcome, v.ReasonCodes())
	}
	again := e.Reconsider(t.Context(), s, nil, Approval{DecisionID: v.DecisionID, By: "alice"})
	if again.Outcome != OutcomePass || again.Reservation != v.DecisionID {
		t.Fatalf("reconsidered: %v %v, reservation %q", again.Outcome, again.ReasonCodes(), again.Reservation)
	}
	if hour := usageOf(t, store, "notes"); hour.Requests != 1 || hour.Tokens != 7+1000 {
		t.Errorf("hour usage %+v, want one request reserving 1007", hour)
	}
}

// A request blocked by validation still counts as a request (a server
// flooding malformed requests is bursting), but reserves nothing.
func TestBudgetCountsScreenedRequests(t *testing.T) {
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: budgetData}})
	if _, ok := e.Screen(t.Context(), sampling("notes", `{"messages":[],"maxTokens":500}`)); ok {
		t.Fatal("Screen passed an empty message list")
	}
	if hour := usageOf(t, store, "notes"); hour != (review.Usage{Requests: 1}) {
		t.Errorf("hour usage %+v, want one request and nothing reserved", hour)
	}
}

func usageOf(t *testing.T, store *review.Store, server string) review.Usage {
	t.Helper()
	u, err := store.UsageIn(t.Context(), server, DefaultUsageWindows, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u["hour"]
}
