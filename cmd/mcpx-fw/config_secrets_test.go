package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// configCanary stands for a secret written where the config wants
// something else: a token, a password in a URL, a header value.
const configCanary = "ghp_CANARY7d1e0c5a9b"

// TestCheckShowsNoConfigValue: an attacker's config (or a user's mistake
// with a pasted credential) whose every value is a secret in a shape its
// key does not take (a header as a list, a token as a mapping, a URL with
// a password and another scheme, a command line carrying a token, a
// duration, a number, a word) makes check name each problem on one line
// at its file:line with the key path, and print the secret nowhere.
func TestCheckShowsNoConfigValue(t *testing.T) {
	c := configCanary
	file := []struct{ line, problem string }{ // problem: how its line starts after FILE:LINE:, "" for none
		{"state_dir: [" + c + "]", "state_dir: want a string, found a list"},
		{"store:", ""},
		{"  url: {password: " + c + "}", "store.url: want a string, found a mapping"},
		{"policy:", ""},
		{"  default: " + c, "policy.default: want one of review, deny, permit"},
		{"review:", ""},
		{"  timeout: " + c, "review.timeout: want a duration such as 250ms or 10m, found a string that is not one"},
		{"  notify:", ""},
		{"    command: notify-send --token " + c, "review.notify.command: a whole command line in one string, not a program: write it as a list"},
		{"metrics:", ""},
		{"  addr: " + c, "metrics.addr: want HOST:PORT"},
		{"decision_log:", ""},
		{"  service:", ""},
		{"    url: https://logs.example.com", ""},
		{"    credentials: {bearer: {token: [" + c + "]}}", "decision_log.service.credentials.bearer.token: want a string, found a list"},
		{"tracing:", ""},
		{"  otlp:", ""},
		{"    endpoint: \"https://u:" + c + "@collector:43 18\"", "tracing.otlp.endpoint: want an http:// or https:// URL such as https://collector:4318/v1/traces, found a string that is not a URL"},
		{"servers:", ""},
		{"  gh:", ""},
		{"    url: ftp://user:" + c + "@example.com/mcp", "servers.gh.url: want an http:// or https:// URL such as https://example.com/mcp, found another scheme"},
		{"    headers:", "servers.gh.headers: a header name holds a character HTTP does not allow"}, // at headers:, as the key path cannot name the entry without showing it
		{"      Authorization: [Bearer " + c + "]", "servers.gh.headers.Authorization: want a string, found a list"},
		{"      X-Api-Key: {value: " + c + "}", "servers.gh.headers.X-Api-Key: want a string, found a mapping"},
		{"      \"Authorization: Bearer " + c + "\": x", ""},
		{"  local:", ""},
		{"    command: my-server --api-key " + c, "servers.local.command: a whole command line in one string, not a program: write it as a list"},
		{"    env:", ""},
		{"      API_TOKEN: [" + c + "]", "servers.local.env.API_TOKEN: want a string, found a list"},
		{"    max_tokens: " + c, "servers.local.max_tokens: want a whole number, found a string"},
		{"    elicitation:", ""},
		{"      allowed_hosts: [\"https://" + c + "@auth.example.com\"]", "servers.local.elicitation.allowed_hosts[0]: not a host name (it has a scheme)"},
	}
	var content strings.Builder
	dir := t.TempDir()
	cfg := dir + "/mcpx-fw.yaml"
	var want []string
	for i, l := range file {
		content.WriteString(l.line + "\n")
		if l.problem != "" {
			want = append(want, fmt.Sprintf("mcpx-fw: %s:%d: %s", cfg, i+1, l.problem))
		}
	}
	want = append(want, "mcpx-fw: MCPXFW_POLICY_TIMEOUT: policy.timeout: want a duration such as 250ms or 10m")
	writeFile(t, dir, "mcpx-fw.yaml", content.String())
	cmd := exec.Command(binary, "check", "--config", cfg)
	cmd.Env = append(os.Environ(), "MCPXFW_POLICY_TIMEOUT="+c, "PATH="+t.TempDir())
	res := mustRun(t, cmd)
	if strings.Contains(res.stdout+res.stderr, "CANARY") {
		t.Errorf("check printed a value of the config:\nstdout %q\nstderr:\n%s", res.stdout, res.stderr)
	}
	got := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n") // each line "mcpx-fw: PLACE: …"
	if res.code != exitFailure || res.stdout != "" || len(got) != len(want) {
		t.Fatalf("check: exit %d, stdout %q, %d lines for %d problems:\n%s", res.code, res.stdout, len(got), len(want), res.stderr)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem line %d:\n%s\nwant it to start\n%s", i+1, got[i], want[i])
		}
	}
}

// TestCheckMissingProgramShowsNoValue: a command whose program is not
// there (here a NAME=secret pasted first, as a shell line writes it) is
// refused at its key's file:line without printing the program, for a
// server and for review.notify.
func TestCheckMissingProgramShowsNoValue(t *testing.T) {
	for _, tc := range []struct{ name, servers, notify, key string }{
		{"server", "  x:\n    command: [\"API_KEY=" + configCanary + "\", npx]\n", "", "servers.x.command"},
		{"review.notify", peerServer("peer", 0), "    command: [\"TOKEN=" + configCanary + "\"]\n", "review.notify.command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, tc.servers)
			if tc.notify != "" {
				writeNotify(t, cfg, tc.notify)
			}
			want := fmt.Sprintf("mcpx-fw: %s:%d: %s: its program (the first word) is not found", cfg, lineHolding(t, cfg, configCanary), tc.key)
			res := runWithPath(t, t.TempDir(), "check", "--config", cfg)
			if res.code != exitFailure || !strings.HasPrefix(res.stderr, want) || !oneLine(res.stderr) || strings.Contains(res.stdout+res.stderr, "CANARY") {
				t.Errorf("check: exit %d, stdout %q, stderr %q; want one line starting %q, without the program", res.code, res.stdout, res.stderr, want)
			}
		})
	}
}

// lineHolding is the number of the first line of file holding s.
func lineHolding(t *testing.T, file, s string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, s) {
			return i + 1
		}
	}
	t.Fatalf("%s holds no %q", file, s)
	return 0
}
