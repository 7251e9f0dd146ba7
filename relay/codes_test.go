package relay

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// TestWireError covers every outcome of DESIGN §2's wire mapping.
func TestWireError(t *testing.T) {
	missing := []validate.Violation{{Rule: "SMP-06.pairing", Path: "/messages/0", Message: "no tool_use for t1"}}
	cases := []struct {
		name     string
		v        engine.Verdict
		wantCode int64
		wantMsg  string
	}{
		{"structural violation", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageRequest, Violations: missing},
			-32602, "Tool result missing in request"},
		{"policy deny", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageRequest, Reasons: []engine.Reason{{Code: "max-tokens", Message: "secret detail"}}},
			-1, "User rejected sampling request: denied by policy"},
		{"reviewer reject", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageRequest, Reasons: []engine.Reason{{Code: reasonRejected}}},
			-1, "User rejected sampling request: rejected by reviewer"},
		{"result denied", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageResult, Reasons: []engine.Reason{{Code: "secret-in-completion"}}},
			-1, "User rejected sampling request: completion withheld by policy"},
		{"invalid completion", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageResult, Violations: []validate.Violation{{Rule: "RES-02.model"}}},
			-32603, "host returned an invalid completion: " + validate.Title("RES-02.model")},
		{"policy error", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: "policy-error"}}, Err: errors.New("conflict in /x.rego:3")},
			-32603, "policy evaluation failed"},
		{"store error", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: "store-error"}}},
			-32603, "review queue unavailable"},
		{"no host", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: reasonNoHost}}},
			-32603, "no host can answer sampling requests"},
		{"expired", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: reasonExpired, Message: "expired after 10m0s awaiting review"}}},
			-32603, "expired after 10m0s awaiting review"},
		{"abandoned", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: reasonAbandon}}},
			-32603, "review abandoned: the request can no longer be answered"},
		{"unlabelled error", engine.Verdict{}, -32603, "sampling request could not be decided"},
		{"a pass never maps to success", engine.Verdict{Outcome: engine.OutcomePass}, -32603, "sampling request could not be decided"},
		{"an escalation never maps to success", engine.Verdict{Outcome: engine.OutcomeEscalate}, -32603, "sampling request could not be decided"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.DecisionID = "dc-0123456789abcdef"
			we := wireError(tc.v)
			if we.Code != tc.wantCode || we.Message != tc.wantMsg {
				t.Fatalf("wireError = %d %q, want %d %q", we.Code, we.Message, tc.wantCode, tc.wantMsg)
			}
			var data map[string]any
			if err := json.Unmarshal(we.Data, &data); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"decision_id": "dc-0123456789abcdef", "reason_codes": toAny(tc.v.ReasonCodes())}
			if diff := cmp.Diff(want, data); diff != "" {
				t.Errorf("data carries more or less than the decision id and reason codes (-want +got):\n%s", diff)
			}
		})
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestUnescapeHTML: only encoding/json's HTML escapes are undone.
func TestUnescapeHTML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"t":"\u003cb\u003e \u0026"}`, `{"t":"<b> &"}`},
		{`{"t":"\\u003c"}`, `{"t":"\\u003c"}`},
		{`{"t":"\\\u003c"}`, `{"t":"\\<"}`},
		{`{"t":"\u00e9"}`, `{"t":"\u00e9"}`},
		{`{"t":"plain"}`, `{"t":"plain"}`},
		{`"\u003`, `"\u003`},
	} {
		if got := string(unescapeHTML([]byte(tc.in))); got != tc.want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
