package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// policy init writes a folder that stock opa and mcpx-fw both test green
// (the composition's own tests included), that serve's start-up path
// loads, with a package per configured server (names that are Rego
// keywords or hold a '-' too, and the shipped examples' with their tests)
// or one example.
func TestPolicyInit(t *testing.T) {
	opa := opaBinary(t)
	tests := []struct {
		name, servers string
		want          []string
	}{
		{"servers", "servers:\n  github-mcp:\n    command: [cat]\n    label: \"Code\\nreview\"\n  notes:\n    command: [cat]\n  default:\n    command: [cat]\n  everything:\n    command: [cat]\n",
			[]string{"servers/github-mcp.rego", "servers/notes.rego", "servers/default.rego", "servers/everything.rego"}},
		{"none", "", []string{"servers/example.rego"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeFile(t, dir, "mcpx-fw.yaml", "state_dir: state\nisolation:\n  default: none\n"+tt.servers)
			rules := filepath.Join(dir, "rules")
			res := runCLI(t, "policy", "init", "--config", cfg, rules)
			if res.code != 0 {
				t.Fatalf("init: exit %d: %s", res.code, res.stderr)
			}
			if !strings.Contains(res.stdout, "in effect: the shipped policies built into mcpx-fw decide (no policy.dir), not "+rules+"\nnext: set policy.dir: rules in "+cfg) {
				t.Errorf("init output does not say what decides and what to set policy.dir to:\n%s", res.stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.stdout, filepath.Join(rules, w)) {
					t.Errorf("init output lacks %s:\n%s", w, res.stdout)
				}
			}
			// The composition's tests decide with fixtures of their own, so
			// they come along and pass without the example servers.
			for _, f := range []string{"mcpxfw/main_test.rego", "mcpxfw/baseline.rego"} {
				if _, err := os.Stat(filepath.Join(rules, f)); err != nil {
					t.Errorf("init did not write %s: %v", f, err)
				}
			}
			caps := filepath.Join(rules, "capabilities.json")
			for _, args := range [][]string{
				{"test", "--capabilities", caps, rules},
				{"check", "--strict", "--capabilities", caps, "-s", filepath.Join(rules, "schemas/input.json"), rules},
				{"fmt", "--list", "--fail", rules},
			} {
				if out, err := exec.Command(opa, args...).CombinedOutput(); err != nil {
					t.Errorf("opa %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			if res := runCLI(t, "policy", "test", rules); res.code != 0 {
				t.Errorf("policy test: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
			}
			withDir := writeFile(t, dir, "with-dir.yaml", "state_dir: state\nisolation:\n  default: none\npolicy:\n  dir: rules\n"+tt.servers)
			if res := runCLI(t, "check", "--no-start", "--config", withDir); res.code != 0 || !strings.Contains(res.stdout, "policy: folder "+rules) {
				t.Errorf("check with the folder: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
			}
			res = runCLI(t, "policy", "init", "--force", "--config", withDir, rules)
			if res.code != 0 || !strings.Contains(res.stdout, "in effect: "+rules+" decides from now on: policy.dir names it\n") {
				t.Errorf("init into the folder policy.dir names: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
			}
		})
	}
}

// policy init never writes over a file unless told to: the error names
// the file, and --force writes it all again.
func TestPolicyInitRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", "state_dir: state\n")
	edited := writeFile(t, dir, "policies/servers/example.rego", "package mcpxfw.servers.example\n")
	res := runCLI(t, "policy", "init", "--config", cfg, filepath.Join(dir, "policies"))
	if res.code != exitFailure || !oneLine(res.stderr) || !strings.Contains(res.stderr, edited+" exists; --force overwrites it") {
		t.Fatalf("exit %d, want 1 and one line naming %s:\n%s", res.code, edited, res.stderr)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "policies", "mcpxfw", "*")); len(matches) != 0 {
		t.Errorf("a refused init wrote %v", matches)
	}
	if res := runCLI(t, "policy", "init", "--force", "--config", cfg, filepath.Join(dir, "policies")); res.code != 0 {
		t.Fatalf("--force: exit %d: %s", res.code, res.stderr)
	}
	if res := runCLI(t, "policy", "test", filepath.Join(dir, "policies")); res.code != 0 {
		t.Errorf("policy test after --force: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}
