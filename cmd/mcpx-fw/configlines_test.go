package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestConfigProblemsReadAlike: a config with several problems prints each
// on its own line in one form, "mcpx-fw: FILE:LINE: …", the first as the
// rest.
func TestConfigProblemsReadAlike(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "d.yaml", "servers:\n  a:\n    command: [x]\n    lable: y\n  b:\n    url: 3\nservres: {}\n")
	res := runCLI(t, "check", "--config", cfg)
	want := []string{
		"mcpx-fw: " + cfg + ":4: unknown key servers.a.lable (did you mean label?)",
		"mcpx-fw: " + cfg + ":6: servers.b.url: ",
		"mcpx-fw: " + cfg + ":7: unknown key servres (did you mean servers?)",
	}
	lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n")
	if res.code != exitFailure || len(lines) != len(want) {
		t.Fatalf("check: exit %d, stderr %q; want 1 and %d lines", res.code, res.stderr, len(want))
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, want[i]) {
			t.Errorf("line %d: %q; want it to start with %q", i+1, line, want[i])
		}
	}
}

// TestUnsetVariablesAtTheirLines: every ${VAR} of a server's headers or
// env that is not set is named at once, each at the line of the file that
// writes it, in the form of every other config problem; never a value.
func TestUnsetVariablesAtTheirLines(t *testing.T) {
	servers := "  peer:\n    url: https://peer.example/mcp\n    headers: {Authorization: \"Bearer ${MCPXFW_TEST_UNSET_A}\"}\n" +
		"  other:\n    command: [sh]\n    env:\n      TOKEN: \"${MCPXFW_TEST_UNSET_B}\"\n"
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, servers)
	line := func(key string) int {
		for i, l := range strings.Split(readFile(t, cfg), "\n") {
			if strings.Contains(l, key) {
				return i + 1
			}
		}
		t.Fatalf("%s is not in the config", key)
		return 0
	}
	want := []string{ // in the file's order
		fmt.Sprintf("%s:%d: servers.peer.headers.authorization: ${MCPXFW_TEST_UNSET_A} is not set in the environment", cfg, line("Authorization:")),
		fmt.Sprintf("%s:%d: servers.other.env.TOKEN: ${MCPXFW_TEST_UNSET_B} is not set in the environment", cfg, line("TOKEN:")),
	}
	for _, sub := range []string{"check", "serve"} {
		res := runCLI(t, sub, "--config", cfg)
		if got := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n"); res.code != exitFailure || len(got) != 2 ||
			got[0] != "mcpx-fw: "+want[0] || got[1] != "mcpx-fw: "+want[1] {
			t.Errorf("%s: exit %d, stderr %q; want 1 and\n%s\n%s", sub, res.code, res.stderr, want[0], want[1])
		}
	}
}
