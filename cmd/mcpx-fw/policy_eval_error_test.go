package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// conflictPolicy is the shipped policy set plus a package for the server
// "boom" whose permit rule has two values for every request: OPA cannot
// evaluate it, so every verdict for boom is error.
func conflictPolicy(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "servers"), "boom.rego", `package mcpxfw.servers.boom

permit := true if input.stage
permit := false if input.stage
`)
	return dir
}

// TestPolicyEvalErrorVerdictExits1: a verdict of error (the policy could
// not decide, and serve refuses the request) exits 1 in both forms, after
// printing the verdict, so a script testing a policy cannot take it for a
// pass; --help says what each exit status means.
func TestPolicyEvalErrorVerdictExits1(t *testing.T) {
	cfg := testConfig(t, conflictPolicy(t), time.Minute, peerServer("boom", 0))
	file := writeFile(t, t.TempDir(), "request.json", evalParams)
	res := runCLI(t, "policy", "eval", "--config", cfg, "--server", "boom", "--json", file)
	var out evalResult
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.Outcome != "error" {
		t.Fatalf("--json printed %q (%v), want the error verdict", res.stdout, err)
	}
	if res.code != exitFailure || !oneLine(res.stderr) || !strings.Contains(res.stderr, "verdict: error") {
		t.Errorf("--json: exit %d, stderr %q; want %d and one line naming the verdict", res.code, res.stderr, exitFailure)
	}
	res = runCLI(t, "policy", "eval", "--config", cfg, "--server", "boom", file)
	if res.code != exitFailure || !strings.Contains(res.stdout, "verdict:    error") {
		t.Errorf("text: exit %d, stdout %q; want %d after the verdict", res.code, res.stdout, exitFailure)
	}
	help := runCLI(t, "policy", "eval", "--help")
	if !strings.Contains(help.stdout, "Exit status: 0 when the policy decided") {
		t.Errorf("policy eval --help does not say what its exit statuses mean:\n%s", help.stdout)
	}
}

// TestPolicyEvalPrintsRegoErrorsAsLines: OPA's error, which names each
// conflicting value on a line of its own, is printed as those lines, not
// as one line holding escaped newlines.
func TestPolicyEvalPrintsRegoErrorsAsLines(t *testing.T) {
	cfg := testConfig(t, conflictPolicy(t), time.Minute, peerServer("boom", 0))
	file := writeFile(t, t.TempDir(), "request.json", evalParams)
	res := runCLI(t, "policy", "eval", "--config", cfg, "--server", "boom", "--width", "400", file)
	if strings.Contains(res.stdout, `\n`) || strings.Contains(res.stdout, `\t`) {
		t.Errorf("the error is printed with escapes:\n%s", res.stdout)
	}
	for _, want := range []string{"\n              true at ", "boom.rego:3\n", "\n              false at "} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
}

// TestCheckPrintsRegoErrorsAsLines: a policy that does not compile is
// reported a problem per line, with OPA's detail (the source line, the
// caret under the column) indented by spaces, never as escaped tabs.
func TestCheckPrintsRegoErrorsAsLines(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policies")
	writeFile(t, pol, "mcpxfw/main.rego", "package mcpxfw\n\nfoo := input.x +\n")
	writeFile(t, pol, "mcpxfw/other.rego", "package mcpxfw\n\nbar := \n")
	res := runCLI(t, "check", "--config", testConfig(t, pol, time.Minute, peerServer("peer", 0)))
	if res.code != exitFailure || strings.Contains(res.stderr, `\t`) || strings.Contains(res.stderr, `\n`) {
		t.Fatalf("exit %d, stderr with escapes:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"errors occurred during loading:\n", "\n" + pol + "/mcpxfw/main.rego:", "\n    foo := input.x +\n", "\n                   ^\n"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
}
