package engine

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDenyIsNeverOverridable holds the invariant that a blocker is never
// overridable (ARCHITECTURE.md, Invariants) over the golden inputs: for
// every fixture, stage and configured default, when any deny rule fires,
// the outcome is a blocker with or without an approval (edited or not),
// and an approval never removes a deny reason.
func TestDenyIsNeverOverridable(t *testing.T) {
	approvals := map[string]any{
		"none":     nil,
		"approved": map[string]any{"decision_id": "dc-1", "by": "alice", "at": "2026-01-02T03:04:05Z", "edited": false},
		"edited":   map[string]any{"decision_id": "dc-1", "by": "alice", "at": "2026-01-02T03:04:05Z", "edited": true},
	}
	denied := 0
	for _, def := range []string{"review", "deny", "permit"} {
		data := fixtureData(t)
		data["default"] = def
		p := loadTestPolicy(t, PolicyConfig{Dir: shippedPolicies, Data: data})
		for _, name := range goldenNames(t) {
			for _, stage := range []Stage{StageRequest, StageResult} {
				base := decideGolden(t, p, name, stage, nil)
				if len(base.Deny) > 0 {
					denied++
				}
				for _, label := range slices.Sorted(maps.Keys(approvals)) {
					got := decideGolden(t, p, name, stage, approvals[label])
					if len(got.Deny) > 0 && got.Outcome != OutcomeBlocker {
						t.Errorf("%s/%s/%s/default %s: deny %v but outcome %v", name, stage, label, def, policyCodes(got.Deny), got.Outcome)
					}
					if !slices.Equal(policyCodes(got.Deny), policyCodes(base.Deny)) {
						t.Errorf("%s/%s/%s/default %s: approval changed deny %v to %v", name, stage, label, def, policyCodes(base.Deny), policyCodes(got.Deny))
					}
				}
			}
		}
	}
	if denied == 0 {
		t.Fatal("no fixture fires a deny rule; the invariant was not exercised")
	}
}

// goldenNames lists the golden input files by name.
func goldenNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(inputsDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	return files
}

// decideGolden evaluates a golden input at the given stage with the given
// approval.
func decideGolden(t *testing.T, p *Policy, path string, stage Stage, approval any) PolicyDecision {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in := decodePolicyJSON(t, string(b))
	in["stage"], in["approval"] = string(stage), approval
	d, err := p.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}
