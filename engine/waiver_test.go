package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// keyCompletion is a completion holding an AWS access key id.
const keyCompletion = `{"role":"assistant","model":"m","content":{"type":"text","text":"AKIAIOSFODNN7EXAMPLE"},"stopReason":"endTurn"}`

// openPolicy is the shipped policies with a package for the server open
// that permits everything, followed by extra.
func openPolicy(t *testing.T, extra string) string {
	t.Helper()
	dir := copyPolicyDir(t, shippedPolicies)
	pkg := "package mcpxfw.servers.open\n\npermit := true\n" + extra
	if err := os.WriteFile(filepath.Join(dir, "servers", "open.rego"), []byte(pkg), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A server package that permits everything still gets the baseline: its
// completion holding a key is held for a person.
func TestPermitEverythingKeepsBaseline(t *testing.T) {
	e, _ := newTestEngine(t, Config{Policy: PolicyConfig{Dir: openPolicy(t, "")}})
	s := sampling("open", `{"maxTokens":100,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)
	if v := e.Decide(t.Context(), s); v.Outcome != OutcomePass {
		t.Fatalf("request: %v %v %v", v.Outcome, v.ReasonCodes(), v.Err)
	}
	v := e.Check(t.Context(), s, []byte(keyCompletion))
	if v.Outcome != OutcomeEscalate || len(v.Reasons) != 1 || v.Reasons[0].Code != "secret-in-completion" || len(v.Waived) != 0 {
		t.Fatalf("result: %v %v waived %v %v, want escalate for secret-in-completion", v.Outcome, v.ReasonCodes(), v.Waived, v.Err)
	}
}

// A waiver relaxes the baseline rule it names, and the decision log's
// result says which.
func TestWaiverShowsInDecisionLog(t *testing.T) {
	var buf bytes.Buffer
	dir := openPolicy(t, "\nwaive contains \"secret-in-completion\"\n")
	e, _ := newTestEngine(t, Config{Policy: PolicyConfig{Dir: dir}, DecisionLog: &buf})
	s := sampling("open", `{"maxTokens":100,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)
	e.Decide(t.Context(), s)
	v := e.Check(t.Context(), s, []byte(keyCompletion))
	if v.Outcome != OutcomePass || len(v.Waived) != 1 || v.Waived[0].Code != "secret-in-completion" {
		t.Fatalf("result: %v %v waived %v %v, want pass with secret-in-completion waived", v.Outcome, v.ReasonCodes(), v.Waived, v.Err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	var ev struct {
		Result struct {
			Waived []Reason `json:"waived"`
		} `json:"result"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Result.Waived) != 1 || ev.Result.Waived[0].Code != "secret-in-completion" {
		t.Errorf("the decision log's result lists waived %v, want secret-in-completion", ev.Result.Waived)
	}
}

// The review a decision opens keeps the baseline reasons the server's
// package waived on it, for show and the console to say.
func TestWaiverKeptWithReview(t *testing.T) {
	dir := openPolicy(t, "\nwaive contains \"secret-in-completion\"\n\nreview contains {\"code\": \"looked-at\", \"message\": \"every answer\"} if input.stage == \"result\"\n")
	e, store := newTestEngine(t, Config{Policy: PolicyConfig{Dir: dir}})
	s := sampling("open", `{"maxTokens":100,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)
	e.Decide(t.Context(), s)
	v := e.Check(t.Context(), s, []byte(keyCompletion))
	if v.Outcome != OutcomeEscalate || v.ReviewID == "" {
		t.Fatalf("result: %v %v %v, want a review for looked-at", v.Outcome, v.ReasonCodes(), v.Err)
	}
	it, err := store.Get(t.Context(), v.ReviewID)
	if err != nil {
		t.Fatal(err)
	}
	if len(it.Waived) != 1 || it.Waived[0].Code != "secret-in-completion" || len(it.Reasons) != 1 || it.Reasons[0].Code != "looked-at" {
		t.Errorf("review: reasons %v waived %v, want looked-at, with secret-in-completion waived", it.Reasons, it.Waived)
	}
}
