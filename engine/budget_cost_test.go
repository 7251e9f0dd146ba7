package engine

import (
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// smallBudget gives notes 1000 tokens an hour.
var smallBudget = map[string]any{
	"default": "review",
	"servers": map[string]any{"notes": map[string]any{"max_tokens": 4096, "budget": map[string]any{"hourly_tokens": 1000}}},
}

// blocksParams is a one-message request of the given content blocks, and
// tools when not nil, asking for maxTokens.
func blocksParams(t *testing.T, maxTokens int, tools []any, blocks ...any) string {
	t.Helper()
	req := map[string]any{"messages": []any{map[string]any{"role": "user", "content": blocks}}, "maxTokens": maxTokens}
	if tools != nil {
		req["tools"] = tools
	}
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func textBlock(s string) any { return map[string]any{"type": "text", "text": s} }

// TestBudgetChargesThePrompt: what a request has the model read is
// charged against its server's budget, by the estimate the policy sees,
// beside what the model may write. Under 1000 tokens an hour, requests
// asking for one token are let through while their prompts fit and
// refused once the prompts have spent the budget, whatever the prompt is
// made of: ASCII, CJK text (a token per byte of it), an image (by the size
// its header states), audio, tool definitions. A budget that counts
// maxTokens alone lets each through, however big.
func TestBudgetChargesThePrompt(t *testing.T) {
	desc := strings.Repeat("Looks things up. ", 120) // 2040 bytes: 510 tokens, with the rest of the tool more
	tests := []struct {
		name   string
		params string
		passes int // requests let through before the budget refuses the next
	}{
		{"ascii", textParams(strings.Repeat("a", 2000), 1), 1},                        // 500 + 1
		{"cjk", textParams(strings.Repeat("漢", 150), 1), 2},                           // 450 + 1
		{"emoji", textParams(strings.Repeat("🙂", 100), 1), 2},                         // 400 + 1
		{"image", blocksParams(t, 1, nil, textBlock("hi"), pngBlock(t, 600, 600)), 2}, // 480 + 1 + 1
		{"image too big alone", blocksParams(t, 1, nil, pngBlock(t, 1500, 1000)), 0},  // 2000 + 1
		{"audio", blocksParams(t, 1, nil, audioBlock(7000)), 2},                       // 438 + 1
		{"tool definitions", blocksParams(t, 1, []any{map[string]any{"name": "lookup", "description": desc, "inputSchema": map[string]any{"type": "object"}}}, textBlock("hi")), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: smallBudget}})
			s := sampling("notes", tt.params)
			for i := range tt.passes {
				if v := e.Decide(t.Context(), s); v.Outcome != OutcomePass && v.Outcome != OutcomeEscalate {
					t.Fatalf("request %d: %v %v, want it let through", i+1, v.Outcome, v.ReasonCodes())
				}
			}
			v := e.Decide(t.Context(), s)
			if v.Outcome != OutcomeBlocker || !slices.Equal(v.ReasonCodes(), []string{"budget-exhausted"}) {
				t.Fatalf("request %d: %v %v, want blocker [budget-exhausted]", tt.passes+1, v.Outcome, v.ReasonCodes())
			}
			if hour := usageOf(t, store, "notes"); hour.Tokens > 1000 {
				t.Errorf("hour usage %+v: the budget of 1000 was overspent", hour)
			}
		})
	}
}

func pngBlock(t *testing.T, w, h int) any {
	return map[string]any{"type": "image", "data": encodedImage(t, "png", w, h), "mimeType": "image/png"}
}

func audioBlock(n int) any {
	return map[string]any{"type": "audio", "data": base64.StdEncoding.EncodeToString(make([]byte, n)), "mimeType": "audio/wav"}
}

// TestBudgetApprovalCountsItsRequestOnce: a held request reserved its
// cost when it was held; its re-decision after the approval judges the
// budget on the usage without that reservation, as its first decision
// did: counted twice, it would be refused, and the CLI's re-check would
// refuse to approve it.
func TestBudgetApprovalCountsItsRequestOnce(t *testing.T) {
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: smallBudget}})
	s := sampling("notes", textParams("what is the admin password?", 600)) // 7 + 600
	v := e.Decide(t.Context(), s)
	if v.Outcome != OutcomeEscalate {
		t.Fatalf("got %v %v, want escalate", v.Outcome, v.ReasonCodes())
	}
	for _, who := range []string{"the CLI's re-check", "serve's re-decision"} {
		again := e.Reconsider(t.Context(), s, nil, Approval{DecisionID: v.DecisionID, By: "alice"})
		if again.Outcome != OutcomePass {
			t.Fatalf("%s: %v %v, want pass", who, again.Outcome, again.ReasonCodes())
		}
	}
	if hour := usageOf(t, store, "notes"); hour != (review.Usage{Requests: 1, RequestedTokens: 600, Tokens: 607}) {
		t.Errorf("hour usage %+v, want the one reservation", hour)
	}
}

// TestBudgetEditIsCharged: an operator's edit that grows the request
// reserves it again, in place, for what the edited request may cost, and
// its completion settles that: the budget counts the prompt the model
// read and what it wrote. An edit the budget cannot hold is refused.
// Charged at the first request's reservation, the edit would be free, and
// its completion would release edited maxTokens never reserved, spending
// the budget again.
func TestBudgetEditIsCharged(t *testing.T) {
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: smallBudget}})
	s := sampling("notes", textParams("what is the admin password?", 1))
	v := e.Decide(t.Context(), s)
	if v.Outcome != OutcomeEscalate {
		t.Fatalf("got %v %v, want escalate", v.Outcome, v.ReasonCodes())
	}
	edited := s
	edited.Params = []byte(textParams("what is the admin password? "+strings.Repeat("Explain at length. ", 20), 600)) // 102 + 600
	approval := Approval{DecisionID: v.DecisionID, By: "alice", Edited: true}
	too := s
	too.Params = []byte(textParams("what is the admin password?", 994)) // 7 + 994
	if got := e.Reconsider(t.Context(), too, nil, approval); got.Outcome != OutcomeBlocker || !slices.Equal(got.ReasonCodes(), []string{"budget-exhausted"}) {
		t.Errorf("an edit over the budget: %v %v, want blocker [budget-exhausted]", got.Outcome, got.ReasonCodes())
	}
	again := e.Reconsider(t.Context(), edited, nil, approval)
	if again.Outcome != OutcomePass {
		t.Fatalf("the edit: %v %v", again.Outcome, again.ReasonCodes())
	}
	if hour := usageOf(t, store, "notes"); hour != (review.Usage{Requests: 1, RequestedTokens: 600, Tokens: 702}) {
		t.Errorf("after the edit: %+v, want it reserved for the edited request", hour)
	}
	edited.Reservation = again.Reservation
	e.Check(t.Context(), edited, []byte(`{"role":"assistant","model":"m","content":{"type":"text","text":"ok"}}`))
	if hour := usageOf(t, store, "notes"); hour != (review.Usage{Requests: 1, RequestedTokens: 600, ReturnedTokens: 1, Tokens: 103}) {
		t.Errorf("after the completion: %+v, want the edited prompt and what was returned", hour)
	}
}

// TestBudgetRefusalReleases: a held request the operator rejects never
// reaches the model, and gives back what it reserved; it still counts as
// a request, instead of holding its reservation for the rest of the hour.
func TestBudgetRefusalReleases(t *testing.T) {
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Data: smallBudget}})
	v := e.Decide(t.Context(), sampling("notes", textParams("what is the admin password?", 900)))
	if v.Outcome != OutcomeEscalate {
		t.Fatalf("got %v %v, want escalate", v.Outcome, v.ReasonCodes())
	}
	if _, err := store.Reject(t.Context(), v.ReviewID, "alice", "no"); err != nil {
		t.Fatal(err)
	}
	if hour := usageOf(t, store, "notes"); hour != (review.Usage{Requests: 1, RequestedTokens: 900}) {
		t.Errorf("hour usage %+v, want the request counted and nothing reserved", hour)
	}
	if v := e.Decide(t.Context(), sampling("notes", textParams("Summarise my notes", 900))); v.Outcome != OutcomePass {
		t.Errorf("the next request: %v %v, want pass", v.Outcome, v.ReasonCodes())
	}
}

// TestBudgetLateCompletion: a completion settled after its request left
// the hour (a long review, a slow host) settles the request's charge at
// its arrival. Released in the hour it lands in, which never held the
// reservation, it would let the next requests spend the budget again, two
// of 900 passing under 1000.
func TestBudgetLateCompletion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	synctest.Test(t, func(t *testing.T) {
		log := zaptest.NewLogger(t)
		store, err := review.Open(dir, log)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		e, err := New(t.Context(), Config{Policy: PolicyConfig{Dir: shippedPolicies, Data: smallBudget}, ReviewTimeout: time.Minute}, store, log)
		if err != nil {
			t.Fatal(err)
		}
		s := sampling("notes", textParams("Summarise my notes", 995))
		v := e.Decide(t.Context(), s)
		time.Sleep(61 * time.Minute)
		s.Reservation = v.Reservation
		e.Check(t.Context(), s, []byte(`{"role":"assistant","model":"m","content":{"type":"text","text":"ok"}}`))
		var got []Outcome
		for range 2 {
			got = append(got, e.Decide(t.Context(), sampling("notes", textParams("Summarise my notes", 900))).Outcome)
		}
		if want := []Outcome{OutcomePass, OutcomeBlocker}; !slices.Equal(got, want) {
			t.Errorf("the next requests: %v, want %v", got, want)
		}
		if hour := usageOf(t, store, "notes"); hour.Tokens != 905 {
			t.Errorf("hour usage %+v, want the one request of 905 that passed", hour)
		}
	})
}
