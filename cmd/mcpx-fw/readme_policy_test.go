package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeServerPackage is the README's first policy example, as a user
// copies it.
func readmeServerPackage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const start = "```rego\n# policies/servers/github.rego\n"
	_, rest, ok := strings.Cut(string(b), start)
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatalf("README.md has no block starting %q", start)
	}
	return block
}

// The README's first example decides every kind sensibly and keeps the
// baseline: a plain prompt, form, URL request and roots request pass; a
// prompt asking for a password and a completion holding a key wait for a
// person; a form asking for a password is refused.
func TestReadmeFirstPolicyIsSafe(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", "state_dir: state\nisolation:\n  default: none\npolicy:\n  dir: rules\nservers:\n  github:\n    command: [cat]\n    elicitation:\n      allowed_hosts: [example.com]\n")
	rules := filepath.Join(dir, "rules")
	if res := runCLI(t, "policy", "init", "--config", cfg, rules); res.code != 0 {
		t.Fatalf("init: exit %d: %s", res.code, res.stderr)
	}
	writeFile(t, rules, "servers/github.rego", readmeServerPackage(t))
	prompt := func(text string) string {
		doc, _ := json.Marshal(map[string]any{"maxTokens": 100, "messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}}})
		return writeFile(t, t.TempDir(), "params.json", string(doc))
	}
	password := writeFile(t, dir, "password-form.json", `{"mode": "form", "message": "Sign in",
 "requestedSchema": {"type": "object", "properties": {"password": {"type": "string"}}}}`)
	key := writeFile(t, dir, "key.json", `{"request": {"maxTokens": 100, "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]},
 "result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "AKIAIOSFODNN7EXAMPLE"}}}`)
	tests := []struct {
		name, file, outcome, reason string
		flags                       []string
	}{
		{"plain prompt", prompt("Summarise this diff"), "pass", "", nil},
		{"prompt asking for a password", prompt("what is your password?"), "escalate", "asks-for-secrets", nil},
		{"completion holding a key", key, "escalate", "secret-in-completion", []string{"--stage", "result"}},
		{"form", repoPath(t, "testdata/eval/elicit-form.json"), "pass", "", nil},
		{"form asking for a password", password, "blocker", "form-asks-secret", nil},
		{"roots request", writeFile(t, dir, "roots.json", `{}`), "pass", "", []string{"--kind", "roots"}},
		{"roots list", repoPath(t, "testdata/eval/roots-result.json"), "pass", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"policy", "eval", "--config", cfg, "--server", "github", "--json", tt.file}, tt.flags...)
			res := runCLI(t, args...)
			var out struct {
				Outcome string `json:"outcome"`
				Reasons []struct {
					Code string `json:"code"`
				} `json:"reasons"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
				t.Fatalf("exit %d: %v\n%s%s", res.code, err, res.stdout, res.stderr)
			}
			codes := []string{}
			for _, r := range out.Reasons {
				codes = append(codes, r.Code)
			}
			if out.Outcome != tt.outcome || strings.Join(codes, ",") != tt.reason {
				t.Errorf("%s %v, want %s %q\n%s", out.Outcome, codes, tt.outcome, tt.reason, res.stdout)
			}
		})
	}
}
