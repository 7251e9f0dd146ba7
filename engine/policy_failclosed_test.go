package engine

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Every way a policy can fail to decide must be an error from LoadPolicy or
// Evaluate: never a deny, never a pass. Each path has its own test and its
// own tiny policy under testdata/policies/.

// evaluatePolicyCase loads testdata/policies/<name> and evaluates the sample
// input; the test fails unless Evaluate returns an error containing want.
func evaluatePolicyCase(t *testing.T, name, want string) error {
	t.Helper()
	p := loadTestPolicy(t, PolicyConfig{Dir: "../testdata/policies/" + name})
	got, err := p.Evaluate(t.Context(), policyInput(t))
	if err == nil {
		t.Fatalf("Evaluate = %+v, want an error", got)
	}
	if got.Outcome != OutcomeError {
		t.Errorf("outcome = %v alongside the error, want error (the zero value)", got.Outcome)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to mention %q", err, want)
	}
	return err
}

// loadPolicyCase loads testdata/policies/<name> (or another dir) and fails the
// test unless LoadPolicy refuses it with an error containing every want.
func loadPolicyCase(t *testing.T, dir string, want ...string) {
	t.Helper()
	p, err := LoadPolicy(t.Context(), PolicyConfig{Dir: dir})
	if err == nil {
		t.Fatalf("LoadPolicy(%s) = %v, want an error", dir, p)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want it to mention %q", err, w)
		}
	}
}

func TestPolicyFailClosedUndefined(t *testing.T) {
	evaluatePolicyCase(t, "undefined", "undefined")
}

func TestPolicyFailClosedConflict(t *testing.T) {
	evaluatePolicyCase(t, "broken-runtime", "conflicting values")
}

// broken-runtime is what the end-to-end tests use: it must fail for inputs
// of every shape, including an empty one.
func TestPolicyFailClosedConflictForEveryInput(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: "../testdata/policies/broken-runtime"})
	for _, in := range []map[string]any{{}, policyInput(t), policyInput(t, `{"stage": "result"}`)} {
		if got, err := p.Evaluate(t.Context(), in); err == nil {
			t.Errorf("Evaluate(%v) = %+v, want an error", in, got)
		}
	}
}

func TestPolicyFailClosedBuiltinError(t *testing.T) {
	evaluatePolicyCase(t, "builtin-error", "to_number")
}

func TestPolicyFailClosedUnknownOutcome(t *testing.T) {
	evaluatePolicyCase(t, "unknown-word", `unknown outcome "allow"`)
}

func TestPolicyFailClosedWrongDenyType(t *testing.T) {
	evaluatePolicyCase(t, "wrong-deny-type", "deny[0]")
}

func TestPolicyFailClosedNotObject(t *testing.T) {
	evaluatePolicyCase(t, "not-object", "not an object")
}

func TestPolicyFailClosedTimeout(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: "../testdata/policies/slow", Timeout: 10 * time.Millisecond})
	start := time.Now()
	_, err := p.Evaluate(t.Context(), policyInput(t))
	if !errors.Is(err, context.DeadlineExceeded) || !topdown.IsCancel(err) {
		t.Fatalf("err = %v, want a cancelled evaluation wrapping context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Evaluate took %s despite a 10ms timeout", took)
	}
}

func TestPolicyFailClosedCancelled(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: "../testdata/policies/permit-all"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.Evaluate(ctx, policyInput(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// A data.mcpxfw.decision query is a plain reference and cannot yield two
// results from Rego, so the decoder is fed two results directly.
func TestPolicyFailClosedTwoResults(t *testing.T) {
	one := rego.Result{Expressions: []*rego.ExpressionValue{{Value: map[string]any{
		"outcome": "permit", "deny": []any{}, "review": []any{},
	}}}}
	if got, err := decodeDecision(rego.ResultSet{one, one}); err == nil || !strings.Contains(err.Error(), "2 results") {
		t.Fatalf("decodeDecision = %+v, %v; want an error about 2 results", got, err)
	}
}

// Blockers are never overridable: a deny reason makes a blocker even when
// the policy's word says permit.
func TestPolicyDenyReasonForcesBlocker(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: "../testdata/policies/deny-with-permit"})
	got, err := p.Evaluate(t.Context(), policyInput(t))
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != OutcomeBlocker || len(got.Deny) != 1 {
		t.Errorf("got %+v, want a blocker with one deny reason", got)
	}
}

func TestPolicyLoadRefusesHTTPSend(t *testing.T) {
	loadPolicyCase(t, "../testdata/policies/http-send", "http-send/mcpxfw/main.rego:5", "undefined function http.send")
}

func TestPolicyLoadRefusesSyntaxError(t *testing.T) {
	loadPolicyCase(t, "../testdata/policies/syntax-error", "syntax-error/mcpxfw/main.rego:3", "rego_parse_error")
}

func TestPolicyLoadRefusesMissingDir(t *testing.T) {
	loadPolicyCase(t, "../testdata/policies/no-such-dir", "no-such-dir")
}

func TestPolicyLoadRefusesFile(t *testing.T) {
	loadPolicyCase(t, "../testdata/policies/permit-all/mcpxfw/main.rego", "not a directory")
}

func TestPolicyLoadRefusesDirWithoutComposition(t *testing.T) {
	loadPolicyCase(t, "../testdata/policies/no-decision", "data.mcpxfw.decision", "mcpxfw/main.rego")
}

func TestPolicyLoadRefusesNegativeTimeout(t *testing.T) {
	_, err := LoadPolicy(t.Context(), PolicyConfig{Dir: shippedPolicies, Timeout: -time.Second})
	if err == nil {
		t.Fatal("LoadPolicy accepted a negative timeout")
	}
}

// Strict compilation catches what plain OPA only warns about, here an
// unused variable, so the mistake surfaces at start-up.
func TestPolicyLoadIsStrict(t *testing.T) {
	dir := copyPolicyDir(t, "../testdata/policies/permit-all")
	writePolicyFile(t, dir+"/mcpxfw/sloppy.rego", "package mcpxfw.sloppy\n\nx if {\n\ty := 1\n\ttrue\n}\n")
	loadPolicyCase(t, dir, "sloppy.rego:4", "assigned var y unused")
}

// Test files never decide a live request, even a broken one.
func TestPolicyLoadSkipsTests(t *testing.T) {
	dir := copyPolicyDir(t, "../testdata/policies/permit-all")
	writePolicyFile(t, dir+"/mcpxfw/main_test.rego", "package mcpxfw\n\ndecision := 1\n")
	if err := os.WriteFile(dir+"/README.md", []byte("not policy"), 0o644); err != nil {
		t.Fatal(err)
	}
	loadTestPolicy(t, PolicyConfig{Dir: dir})
}
