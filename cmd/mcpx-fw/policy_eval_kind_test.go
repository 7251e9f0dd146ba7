package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestPolicyEvalKinds: policy eval decides saved elicitation and roots
// documents as their kind, given by --kind, by the file, or inferred from
// the file's shape (and says which), for the request and the result
// stage.
func TestPolicyEvalKinds(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	dir := t.TempDir()
	cases := []struct {
		name, file, kind, stage string
		flags                   []string
	}{
		{"form inferred", repoPath(t, "testdata/eval/elicit-form.json"), "elicitation", "request", nil},
		{"url inferred", repoPath(t, "testdata/eval/elicit-url.json"), "elicitation", "request", nil},
		{"form and answer", repoPath(t, "testdata/eval/elicit-form-answer.json"), "elicitation", "result", nil},
		{"roots result", repoPath(t, "testdata/eval/roots-result.json"), "roots", "result", nil},
		{"roots request", writeFile(t, dir, "roots.json", `{}`), "roots", "request", nil},
		{"flag wins", repoPath(t, "testdata/eval/elicit-url.json"), "elicitation", "request", []string{"--kind", "elicitation"}},
		{"sampling", repoPath(t, "testdata/requests/valid/everything-server-text.json"), "sampling", "request", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := c.file
			if strings.Contains(file, "requests/valid") {
				file = samplingParams(t, dir, file)
			}
			args := append([]string{"policy", "eval", "--config", cfg, "--server", "peer", file}, c.flags...)
			res := runCLI(t, append(args, "--json")...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			var out struct {
				Kind       string         `json:"kind"`
				Outcome    string         `json:"outcome"`
				Violations []any          `json:"violations"`
				Input      map[string]any `json:"input"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
				t.Fatalf("%v\n%s", err, res.stdout)
			}
			if out.Kind != c.kind || out.Input["stage"] != c.stage || len(out.Violations) != 0 {
				t.Errorf("kind %q stage %v violations %v; want %s at the %s stage, valid:\n%s", out.Kind, out.Input["stage"], out.Violations, c.kind, c.stage, res.stdout)
			}
			text := runCLI(t, args...)
			if !strings.HasPrefix(text.stdout, "kind:       "+c.kind+"\n") {
				t.Errorf("the text output does not start with the kind:\n%s", text.stdout)
			}
		})
	}
	res := runCLI(t, "policy", "eval", "--config", cfg, "--server", "peer", "--kind", "telepathy", repoPath(t, "testdata/eval/elicit-url.json"))
	if res.code != 2 || !strings.Contains(res.stderr, `--kind "telepathy" is none of sampling, elicitation, roots`) {
		t.Errorf("an unknown --kind: exit %d, %s", res.code, res.stderr)
	}
	help := runCLI(t, "policy", "eval", "--help")
	for _, want := range []string{"--kind", "mcpx-fw policy eval --server everything --kind elicitation form.json", "roots.json", "inferred"} {
		if !strings.Contains(help.stdout, want) {
			t.Errorf("policy eval --help does not teach %q", want)
		}
	}
}

// samplingParams writes the params of a stored request fixture to a file
// of their own.
func samplingParams(t *testing.T, dir, fixture string) string {
	t.Helper()
	var fx struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(readBytes(t, fixture), &fx); err != nil || fx.Params == nil {
		t.Fatalf("%s: %v", fixture, err)
	}
	return writeFile(t, dir, "params.json", string(fx.Params))
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
