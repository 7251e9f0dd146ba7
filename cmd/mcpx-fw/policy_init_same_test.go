package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/policies"
)

// initSample is a saved request policy eval decides, with its flags.
type initSample struct {
	name, file string
	flags      []string
}

// initSamples are a request of every kind and both stages, written under
// dir: sampling short, long, with tools and asking for a password, a
// completion holding a key, forms, a URL request and roots.
func initSamples(t *testing.T, dir string) []initSample {
	prompt := func(name, params string) string {
		return writeFile(t, dir, name+".json", `{"messages": [{"role": "user", "content": {"type": "text", "text": `+params)
	}
	return []initSample{
		{"short prompt", prompt("short", `"Summarise this note"}}], "maxTokens": 100}`), nil},
		{"long prompt", prompt("long", `"Summarise this note"}}], "maxTokens": 1500}`), nil},
		{"tools offered", prompt("tools", `"Search for the weather"}}], "maxTokens": 100, "tools": [{"name": "search", "inputSchema": {"type": "object"}}]}`), nil},
		{"asks for a password", prompt("password", `"What is the admin password for the staging box?"}}], "maxTokens": 100}`), nil},
		{"completion holding a key", writeFile(t, dir, "key.json", `{"request": {"maxTokens": 100, "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]},
 "result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "AKIAIOSFODNN7EXAMPLE"}}}`), nil},
		{"form", repoPath(t, "testdata/eval/elicit-form.json"), nil},
		{"form asking for a password", writeFile(t, dir, "password-form.json", `{"mode": "form", "message": "Sign in",
 "requestedSchema": {"type": "object", "properties": {"password": {"type": "string"}}}}`), nil},
		{"form answer", repoPath(t, "testdata/eval/elicit-form-answer.json"), nil},
		{"URL", repoPath(t, "testdata/eval/elicit-url.json"), nil},
		{"roots request", writeFile(t, dir, "roots.json", `{}`), []string{"--kind", "roots"}},
		{"roots list", repoPath(t, "testdata/eval/roots-result.json"), nil},
	}
}

// evalVerdict is what policy eval --json decided, without its ids: the
// outcome, the reasons (codes and messages), the waivers and violations.
func evalVerdict(t *testing.T, cfg, server string, s initSample) string {
	t.Helper()
	args := append([]string{"policy", "eval", "--config", cfg, "--server", server, "--json", s.file}, s.flags...)
	res := runCLI(t, args...)
	var out struct {
		Kind       string          `json:"kind"`
		Outcome    string          `json:"outcome"`
		Reasons    json.RawMessage `json:"reasons"`
		Waived     json.RawMessage `json:"waived"`
		Violations json.RawMessage `json:"violations"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || res.code != 0 {
		t.Fatalf("%s %s: exit %d: %v\n%s%s", server, s.name, res.code, err, res.stdout, res.stderr)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// policy init never changes a decision by itself. Right after it writes
// the policies folder beside a config that names no policy.dir, that
// folder decides (check says so, and so does init), and every sample is
// decided as the shipped policies decided it: the shipped example packages
// for everything and github-mcp as shipped, the commented package for
// another server as the baseline and the fallback.
func TestPolicyInitDecidesAsBefore(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", "state_dir: state\nisolation:\n  default: none\nservers:\n"+
		"  everything:\n    command: [cat]\n  github-mcp:\n    command: [cat]\n"+
		"  notes:\n    command: [cat]\n    elicitation:\n      allowed_hosts: [auth.example.com]\n")
	servers := []string{"everything", "github-mcp", "notes"}
	samples := initSamples(t, t.TempDir())
	before := map[string]string{}
	for _, server := range servers {
		for _, s := range samples {
			before[server+"/"+s.name] = evalVerdict(t, cfg, server, s)
		}
	}
	if v := before["everything/long prompt"]; !strings.Contains(v, `"outcome":"escalate"`) || !strings.Contains(v, `"code":"long"`) {
		t.Fatalf("the shipped policies do not hold everything's long prompt: %s", v)
	}
	folder := filepath.Join(dir, "policies")
	res := runCLI(t, "policy", "init", "--config", cfg, folder)
	if res.code != 0 {
		t.Fatalf("init: exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{
		"in effect: " + folder + " decides from now on (check says policy: folder " + folder + ")",
		"next: edit the packages, then run: mcpx-fw policy test " + folder + "\n",
		filepath.Join(folder, "servers/everything.rego") + " (the shipped example package for everything, as shipped",
		filepath.Join(folder, "servers/notes.rego") + " (commented: decides as the shipped fallback",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("init output lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "set policy.dir") {
		t.Errorf("init asks for policy.dir, which the folder beside the config does not need:\n%s", res.stdout)
	}
	if res := runCLI(t, "check", "--config", cfg); !strings.Contains(res.stdout, "policy: folder "+folder+"\n") {
		t.Fatalf("check does not name the folder: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, server := range servers {
		for _, s := range samples {
			if after := evalVerdict(t, cfg, server, s); after != before[server+"/"+s.name] {
				t.Errorf("%s, %s: init changed the decision\nbefore %s\nafter  %s", server, s.name, before[server+"/"+s.name], after)
			}
		}
	}
}

// The shipped example packages policy init writes for everything and
// github-mcp are the shipped files, byte for byte, tests included; a
// server named after a shipped test file (github-mcp_test) is refused by
// the config before anything is written.
func TestPolicyInitShippedPackages(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", "state_dir: state\nservers:\n  everything:\n    command: [cat]\n  github-mcp:\n    command: [cat]\n")
	folder := filepath.Join(dir, "rules")
	if res := runCLI(t, "policy", "init", "--config", cfg, folder); res.code != 0 {
		t.Fatalf("init: exit %d: %s", res.code, res.stderr)
	}
	for _, p := range []string{"servers/everything.rego", "servers/everything_test.rego", "servers/github-mcp.rego", "servers/github-mcp_test.rego"} {
		want, err := policies.FS.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(folder, p)); err != nil || string(got) != string(want) {
			t.Errorf("%s is not the shipped file (%v)", p, err)
		}
	}
	cfg = writeFile(t, dir, "tests.yaml", "state_dir: state\nservers:\n  github-mcp_test:\n    command: [cat]\n")
	folder = filepath.Join(dir, "tests")
	res := runCLI(t, "policy", "init", "--config", cfg, folder)
	if res.code == 0 || !strings.Contains(res.stderr, "servers.github-mcp_test: a server name may not end in _test") {
		t.Errorf("init for a server named github-mcp_test: exit %d, want the config's refusal: %s", res.code, res.stderr)
	}
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Errorf("init refused by the config still wrote %s (%v)", folder, err)
	}
}

// Under a config that takes its policy from a bundle service, policy init
// says the bundle decides, not the folder it wrote, even one beside the
// config.
func TestPolicyInitUnderABundle(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", "state_dir: state\npolicy:\n  bundle:\n    url: https://bundles.example.com\n")
	folder := filepath.Join(dir, "policies")
	res := runCLI(t, "policy", "init", "--config", cfg, folder)
	want := "in effect: the bundle from policy.bundle.url in " + cfg + " decides, not " + folder + "\nnext: to use " + folder + ", remove policy.bundle and set policy.dir: policies, "
	if res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Errorf("exit %d, want %q:\n%s%s", res.code, want, res.stdout, res.stderr)
	}
}
