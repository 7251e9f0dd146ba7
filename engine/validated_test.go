package engine

import (
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// countValidations makes e count the requests it validates, by kind.
func countValidations(e *Engine) map[Kind]int {
	counts := map[Kind]int{}
	e.rulesOf = func(k Kind) rules {
		r := rulesOf(k)
		request := r.request
		r.request = func(raw []byte, opt validate.Options) (validate.Document, []validate.Violation) {
			counts[k]++
			return request(raw, opt)
		}
		return r
	}
	return counts
}

const answerText = `{"role":"assistant","model":"m","content":{"type":"text","text":"General Kenobi"}}`

// A request carried from Decide through Check and a re-decision after
// approval is validated once; its operator-edited bytes once more.
func TestRequestValidatedOncePerBytes(t *testing.T) {
	e, _ := newTestEngine(t, Config{})
	counts := countValidations(e)
	s := sampling("everything", textParams("Hello", 2000)) // held: long
	v := e.Decide(t.Context(), s)
	if v.Outcome != OutcomeEscalate || v.Validated == nil {
		t.Fatalf("Decide: %v, validated %v", v.Outcome, v.Validated)
	}
	s.Validated = v.Validated
	approval := Approval{DecisionID: v.DecisionID, By: "alice", At: time.Now()}
	if got := e.Reconsider(t.Context(), s, nil, approval); got.Outcome != OutcomePass {
		t.Fatalf("Reconsider: %v, %v", got.Outcome, got.Reasons)
	}
	if got := e.Check(t.Context(), s, []byte(answerText)); got.Outcome != OutcomePass {
		t.Fatalf("Check: %v, %v", got.Outcome, got.Reasons)
	}
	if counts[KindSampling] != 1 {
		t.Errorf("request validated %d times through Decide, Reconsider and Check, want 1", counts[KindSampling])
	}

	edited := s
	edited.Params = []byte(textParams("Hello there", 100))
	if got := e.Reconsider(t.Context(), edited, nil, approval); got.Outcome != OutcomePass {
		t.Fatalf("edited: %v, %v", got.Outcome, got.Reasons)
	}
	if counts[KindSampling] != 2 {
		t.Errorf("an edit was validated %d times in all, want 2: new bytes are validated", counts[KindSampling])
	}
}

// A Validated vouches only for the bytes, kind and options it was made
// from: anything else is validated afresh, and a request that broke a rule
// yields none.
func TestValidatedNeverVouchesForOtherBytes(t *testing.T) {
	e, _ := newTestEngine(t, Config{})
	counts := countValidations(e)
	s := sampling("everything", textParams("Hello", 100))
	v := e.Decide(t.Context(), s)
	tests := []struct {
		name   string
		change func(*Request)
	}{
		{"other bytes", func(r *Request) { r.Params = []byte(toolParams) }},
		{"the caller's buffer changed", func(r *Request) {
			r.Params = []byte(textParams("Hello", 100))
			r.Validated = newValidated(*r, e.options(*r), v.Validated.doc)
			copy(r.Params[len(r.Params)-4:], "999}")
		}},
		{"fewer capabilities", func(r *Request) { r.Caps = validate.Capabilities{} }},
		{"another era", func(r *Request) { r.Server.Era = "2024-11-05" }},
		{"another kind", func(r *Request) { r.Kind = KindElicitation }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s
			r.Validated = v.Validated
			tt.change(&r)
			before := counts[r.kindOf()]
			e.Check(t.Context(), r, []byte(answerText))
			if counts[r.kindOf()] != before+1 {
				t.Errorf("the request was not validated again")
			}
		})
	}
	blocked := e.Decide(t.Context(), sampling("everything", `{"messages":[],"maxTokens":1}`))
	if blocked.Outcome != OutcomeBlocker || blocked.Validated != nil {
		t.Errorf("a request that broke a rule: %v, Validated %v, want a blocker without one", blocked.Outcome, blocked.Validated)
	}
}

// BenchmarkCheck measures the result stage of a chat of a few kilobytes
// with the request validated again (none), with the request stage's
// validation carried (carried), and with its reservation carried too
// (settles: the completion settles the request's charge on its first
// decision, in a write transaction; after the first iteration the charge
// is settled, and each completion is charged on its own decision, as a
// settlement that finds nothing to settle is).
func BenchmarkCheck(b *testing.B) {
	e, _ := newTestEngine(b, Config{})
	s := sampling("everything", textParams(longText(4096), 100))
	v := e.Decide(b.Context(), s)
	if v.Outcome != OutcomePass {
		b.Fatalf("Decide: %v %v", v.Outcome, v.Violations)
	}
	for _, name := range []string{"none", "carried", "settles"} {
		r := s
		if name != "none" {
			r.Validated = v.Validated
		}
		if name == "settles" {
			r.Reservation = v.Reservation
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				e.Check(b.Context(), r, []byte(answerText))
			}
		})
	}
}

func longText(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefgh "[i%9]
	}
	return string(b)
}
