package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const evalParams = `{"messages":[{"role":"user","content":{"type":"text","text":"Hello there"}}],"maxTokens":2000}`

func TestPolicyEvalText(t *testing.T) {
	cfg := fixtureConfigYAML(t)
	file := writeFile(t, t.TempDir(), "request.json", evalParams)
	res := runCLI(t, "policy", "eval", "--config", cfg, "--server", "everything", file)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{"server:     everything\n", "violations: 0\n", `"maxTokens": 2000`,
		"verdict:    escalate (dc-", "long: maxTokens 2000 is over this server's 1000"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
}

func TestPolicyEvalResultStage(t *testing.T) {
	cfg := fixtureConfigYAML(t)
	file := writeFile(t, t.TempDir(), "pair.json", `{"request": `+evalParams+`, "era": "2025-06-18",
		"result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "-----BEGIN PRIVATE KEY-----"}}}`)
	res := runCLI(t, "policy", "eval", "--config", cfg, "--server", "notes", "--json", file)
	var out evalResult
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || res.code != 0 {
		t.Fatalf("exit %d, %v: %s%s", res.code, err, res.stdout, res.stderr)
	}
	if out.Outcome != "escalate" || out.Input["stage"] != "result" || out.Reasons[0]["code"] != "secret-in-completion" {
		t.Errorf("got %s %v at stage %v", out.Outcome, out.Reasons, out.Input["stage"])
	}
	if proto := out.Input["server"].(map[string]any)["protocol"]; proto != "2025-06-18" {
		t.Errorf("era %v, want the file's 2025-06-18", proto)
	}
}

// Violations are shown, and the policy never runs on an invalid request.
func TestPolicyEvalViolations(t *testing.T) {
	cfg := fixtureConfigYAML(t)
	file := writeFile(t, t.TempDir(), "bad.json", `{"messages":[],"maxTokens":0}`)
	res := runCLI(t, "policy", "eval", "--config", cfg, "--server", "everything", "--json", file)
	var out evalResult
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || res.code != 0 {
		t.Fatalf("exit %d, %v: %s%s", res.code, err, res.stdout, res.stderr)
	}
	if out.Outcome != "blocker" || len(out.Violations) < 2 || len(out.Input["usage"].(map[string]any)) != 0 {
		t.Errorf("got %s with violations %v and usage %v", out.Outcome, out.Violations, out.Input["usage"])
	}
}

func TestPolicyEvalRefusals(t *testing.T) {
	cfg := fixtureConfigYAML(t)
	dir := t.TempDir()
	params := writeFile(t, dir, "params.json", evalParams)
	typo := writeFile(t, dir, "typo.json", `{"request": `+evalParams+`, "resutl": {}}`)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no server", []string{params}, exitUsage, "--server is required"},
		{"result stage without result", []string{"--server", "everything", "--stage", "result", params}, exitUsage, "needs a file with a \"result\""},
		{"unknown stage", []string{"--server", "everything", "--stage", "answer", params}, exitUsage, "neither request nor result"},
		{"unknown member", []string{"--server", "everything", typo}, exitFailure, `unknown field "resutl"`},
		{"missing file", []string{"--server", "everything", dir + "/none.json"}, exitFailure, "none.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, append([]string{"policy", "eval", "--config", cfg}, tt.args...)...)
			if res.code != tt.code || !strings.Contains(res.stderr, tt.want) || !oneLine(strings.SplitN(res.stderr, "\nTry:", 2)[0]) {
				t.Errorf("exit %d, stderr %q; want %d mentioning %q", res.code, res.stderr, tt.code, tt.want)
			}
		})
	}
}

func TestPolicyTestCoverage(t *testing.T) {
	policies := repoPath(t, "policies")
	res := runCLI(t, "policy", "test", "--coverage", policies)
	var report struct {
		Coverage float64 `json:"coverage"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &report); err != nil || res.code != 0 {
		t.Fatalf("exit %d, %v: %s", res.code, err, res.stderr)
	}
	if report.Coverage < 90 {
		t.Errorf("shipped policies covered %.2f%%, want at least 90", report.Coverage)
	}
	if res := runCLI(t, "policy", "test", "--threshold", "90", policies); res.code != 0 {
		t.Errorf("--threshold 90: exit %d: %s", res.code, res.stderr)
	}
	res = runCLI(t, "policy", "test", "--threshold", "101", policies)
	if res.code != exitUsage {
		t.Errorf("--threshold 101: exit %d, want %d", res.code, exitUsage)
	}
}

func TestPolicyTestThresholdNotMet(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "p/main.rego", "package p\n\na if input.x\n\nb if input.y\n")
	writeFile(t, dir, "p/main_test.rego", "package p_test\n\nimport data.p\n\ntest_a if p.a with input as {\"x\": true}\n")
	res := runCLI(t, "policy", "test", "--threshold", "90", dir)
	if res.code != exitFailure || !strings.Contains(res.stderr, "code coverage threshold not met") {
		t.Errorf("exit %d, stderr %q; want 1 and the threshold named", res.code, res.stderr)
	}
}
