package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/rego"
)

// policyResultSet wraps one decoded JSON value as the result set of the decision
// query.
func policyResultSet(t *testing.T, doc string) rego.ResultSet {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return rego.ResultSet{{Expressions: []*rego.ExpressionValue{{Value: v}}}}
}

func TestDecodePolicyDecision(t *testing.T) {
	tests := []struct {
		doc  string
		want PolicyDecision
	}{
		{`{"outcome": "permit", "deny": [], "review": []}`,
			PolicyDecision{Outcome: OutcomePass, Deny: []Reason{}, Review: []Reason{}}},
		{`{"outcome": "review", "deny": [], "review": [{"code": "long", "message": "m"}]}`,
			PolicyDecision{Outcome: OutcomeEscalate, Deny: []Reason{}, Review: []Reason{{"long", "m"}}}},
		{`{"outcome": "deny", "deny": [{"code": "no-tools", "message": ""}], "review": [], "extra": 1}`,
			PolicyDecision{Outcome: OutcomeBlocker, Deny: []Reason{{"no-tools", ""}}, Review: []Reason{}}},
		{`{"outcome": "review", "deny": [{"code": "x", "message": "m", "rule": "r"}], "review": []}`,
			PolicyDecision{Outcome: OutcomeBlocker, Deny: []Reason{{"x", "m"}}, Review: []Reason{}}},
		{`{"outcome": "permit", "deny": [], "review": [], "waived": [{"code": "asks-for-secrets", "message": "m"}]}`,
			PolicyDecision{Outcome: OutcomePass, Deny: []Reason{}, Review: []Reason{}, Waived: []Reason{{"asks-for-secrets", "m"}}}},
	}
	for _, tt := range tests {
		got, err := decodeDecision(policyResultSet(t, tt.doc))
		if err != nil {
			t.Errorf("decodeDecision(%s): %v", tt.doc, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("decodeDecision(%s) (-want +got):\n%s", tt.doc, diff)
		}
	}
}

func TestDecodePolicyDecisionRefuses(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`"permit"`, "is a string, not an object"},
		{`null`, "is missing or null, not an object"},
		{`{"deny": [], "review": []}`, "outcome is missing"},
		{`{"outcome": 1, "deny": [], "review": []}`, "outcome is a number"},
		{`{"outcome": "Permit", "deny": [], "review": []}`, `unknown outcome "Permit"`},
		{`{"outcome": "permit", "review": []}`, "deny is missing"},
		{`{"outcome": "permit", "deny": {}, "review": []}`, "deny is an object, not an array"},
		{`{"outcome": "permit", "deny": [], "review": "long"}`, "review is a string, not an array"},
		{`{"outcome": "permit", "deny": [], "review": [], "waived": null}`, "waived is missing or null, not an array"},
		{`{"outcome": "permit", "deny": [], "review": [], "waived": ["asks-for-secrets"]}`, "waived[0]: reason is a string"},
		{`{"outcome": "deny", "deny": ["no-tools"], "review": []}`, "deny[0]: reason is a string"},
		{`{"outcome": "deny", "deny": [{"message": "m"}], "review": []}`, "deny[0]: code is missing"},
		{`{"outcome": "deny", "deny": [{"code": "", "message": "m"}], "review": []}`, "deny[0]: code is empty"},
		{`{"outcome": "review", "deny": [], "review": [{"code": "c", "message": true}]}`, "review[0]: message is a boolean"},
	}
	for _, tt := range tests {
		got, err := decodeDecision(policyResultSet(t, tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decodeDecision(%s) = %+v, %v; want an error containing %q", tt.doc, got, err, tt.want)
		}
	}
}

func TestDecodePolicyDecisionUndefined(t *testing.T) {
	if _, err := decodeDecision(nil); err == nil || !strings.Contains(err.Error(), "undefined") {
		t.Fatalf("err = %v, want undefined", err)
	}
	noExpr := rego.ResultSet{{}}
	if _, err := decodeDecision(noExpr); err == nil {
		t.Fatal("a result without expressions decoded")
	}
}
