package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/engine/policybundle/bundletest"
)

// opaBinary is the stock opa binary, built from the module graph (OPA is
// a dependency, so this works offline from the module cache), for the
// tests that compare mcpx-fw with it.
func opaBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the opa binary")
	}
	return bundletest.OPA(t)
}

// fixtureConfigYAML writes an mcpx-fw config whose servers, labels, caps
// and budgets are testdata/inputs/data/config.json's, so mcpx-fw and
// `opa eval -d testdata/inputs/data` decide with the same data.
func fixtureConfigYAML(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "testdata/inputs/data/config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Mcpxfw struct {
			Config struct {
				Default string                    `json:"default"`
				Servers map[string]map[string]any `json:"servers"`
			} `json:"config"`
		} `json:"mcpxfw"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	cfg := doc.Mcpxfw.Config
	var servers strings.Builder
	names := make([]string, 0, len(cfg.Servers))
	for name := range cfg.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s, _ := json.Marshal(cfg.Servers[name]) // YAML is a superset of JSON
		fmt.Fprintf(&servers, "  %s: %s\n", name, strings.Replace(string(s), "{", `{"command": ["cat"], `, 1))
	}
	dir := t.TempDir()
	return writeFile(t, dir, "mcpx-fw.yaml", fmt.Sprintf("state_dir: %s\npolicy:\n  dir: %s\n  default: %s\ndecision_log:\n  sink: \"off\"\nservers:\n%s",
		filepath.Join(dir, "state"), repoPath(t, "policies"), cfg.Default, servers.String()))
}

// evalEnvelope is the policy eval FILE that reproduces a golden input: the
// request and result, and the context the input records.
func evalEnvelope(t *testing.T, golden map[string]any) string {
	t.Helper()
	server := golden["server"].(map[string]any)
	env := map[string]any{
		"kind": golden["kind"], "request": golden["request"], "result": golden["result"], "era": server["protocol"],
		"host": golden["host"], "origin": golden["origin"], "reported": server["reported"], "usage": golden["usage"],
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, t.TempDir(), "envelope.json", string(b))
}

// policyWords maps the policy's outcome words to mcpx-fw's.
var policyWords = map[string]string{"deny": "blocker", "review": "escalate", "permit": "pass"}

// TestPolicyEvalAgreesWithOPA is the acceptance test: for every
// golden input, stock `opa eval -d policies -i <fixture>
// data.mcpxfw.decision` and `mcpx-fw policy eval` reach the same outcome
// with the same reasons, and mcpx-fw rebuilds exactly the golden input
// from the saved request.
func TestPolicyEvalAgreesWithOPA(t *testing.T) {
	opa := opaBinary(t)
	cfg := fixtureConfigYAML(t)
	files, err := filepath.Glob(repoPath(t, "testdata/inputs/*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			golden := readJSONFile(t, path)
			want := opaDecision(t, opa, path)
			got := mcpxfwEval(t, cfg, golden)
			if diff := cmp.Diff(golden, got.Input); diff != "" {
				t.Errorf("policy eval built a different input (-golden +mcpx-fw):\n%s", diff)
			}
			if got.Outcome != policyWords[want.Outcome] {
				t.Errorf("outcome: opa %s, mcpx-fw %s", want.Outcome, got.Outcome)
			}
			if diff := cmp.Diff(want.reasons(), got.Reasons); diff != "" {
				t.Errorf("reasons (-opa +mcpx-fw):\n%s", diff)
			}
		})
	}
}

// opaResult is data.mcpxfw.decision as stock opa prints it.
type opaResult struct {
	Outcome string           `json:"outcome"`
	Deny    []map[string]any `json:"deny"`
	Review  []map[string]any `json:"review"`
}

// reasons are the reasons mcpx-fw reports for this decision: the deny list
// for a deny, the review list for a review, none for a permit.
func (r opaResult) reasons() []map[string]any {
	switch r.Outcome {
	case "deny":
		return r.Deny
	case "review":
		return r.Review
	}
	return []map[string]any{}
}

func opaDecision(t *testing.T, opa, input string) opaResult {
	t.Helper()
	out, err := exec.Command(opa, "eval", "-d", repoPath(t, "policies"), "-d", repoPath(t, "testdata/inputs/data"),
		"-i", input, "--format", "raw", "data.mcpxfw.decision").Output()
	if err != nil {
		t.Fatalf("opa eval: %v", err)
	}
	var r opaResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("opa eval printed %s: %v", out, err)
	}
	return r
}

// evalResult is policy eval --json.
type evalResult struct {
	Outcome    string           `json:"outcome"`
	DecisionID string           `json:"decision_id"`
	Reasons    []map[string]any `json:"reasons"`
	Violations []any            `json:"violations"`
	Input      map[string]any   `json:"input"`
}

func mcpxfwEval(t *testing.T, cfg string, golden map[string]any) evalResult {
	t.Helper()
	server := golden["server"].(map[string]any)["name"].(string)
	res := runCLI(t, "policy", "eval", "--config", cfg, "--server", server,
		"--stage", golden["stage"].(string), "--json", evalEnvelope(t, golden))
	if res.code != 0 {
		t.Fatalf("policy eval exit %d: %s", res.code, res.stderr)
	}
	var r evalResult
	if err := decodeNumbers([]byte(res.stdout), &r); err != nil {
		t.Fatalf("policy eval --json printed %s: %v", res.stdout, err)
	}
	if len(r.Violations) != 0 || !strings.HasPrefix(r.DecisionID, "dc-") {
		t.Errorf("violations %v, decision id %q", r.Violations, r.DecisionID)
	}
	return r
}

func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := decodeNumbers(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// decodeNumbers decodes JSON keeping numbers exact (json.Number): a golden
// maxTokens of 2^63-1 must reach policy eval unrounded.
func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
