package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-viper/mapstructure/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
)

// loadHere writes content to mcpx-fw.yaml in a folder of its own, makes
// that the working folder and loads it by its bare name, so errors name it
// as a user who typed --config mcpx-fw.yaml sees it.
func loadHere(t *testing.T, content string) (*Config, error) {
	t.Helper()
	t.Chdir(filepath.Dir(configtest.WriteFile(t, content)))
	return Load(DefaultFile)
}

// TestConfigProblemLines: each problem is one line placed at the line of
// the file to fix (or, for a key the file does not write, at the section
// that holds it), with the key path; a misspelt key gets the nearest known
// key at its level; no Go type or decoder words; every problem of a file
// at once, in the file's order.
func TestConfigProblemLines(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string // the error's lines, exactly
	}{
		{"misspelt top-level key", "servres:\n  a:\n    command: [cat]\n",
			[]string{"mcpx-fw.yaml:1: unknown key servres (did you mean servers?)"}},
		{"misspelt nested key", "review:\n  timeout: 1m\npolicy:\n  dirr: rules\n",
			[]string{"mcpx-fw.yaml:4: unknown key policy.dirr (did you mean dir?)"}},
		{"misspelt server key", "servers:\n  notes:\n    command: [cat]\n    max_tokns: 10\n",
			[]string{"mcpx-fw.yaml:4: unknown key servers.notes.max_tokns (did you mean max_tokens?)"}},
		{"host's mcpServers pasted", "mcpServers:\n  notes: {}\n",
			[]string{"mcpx-fw.yaml:1: unknown key mcpServers (did you mean servers?)"}},
		{"nothing near enough to suggest", "bogus: 1\n",
			[]string{"mcpx-fw.yaml:1: unknown key bogus"}},
		{"a host's type and cwd", "servers:\n  notes:\n    type: stdio\n    command: [cat]\n    cwd: /tmp\n",
			[]string{"mcpx-fw.yaml:3: unknown key servers.notes.type (leave it out: command makes a stdio server, url an HTTP one)",
				"mcpx-fw.yaml:5: unknown key servers.notes.cwd (did you mean dir?)"}},
		{"not a whole number", "servers:\n  x:\n    command: [cat]\n    max_tokens: lots\n",
			[]string{"mcpx-fw.yaml:4: servers.x.max_tokens: want a whole number, found a string"}},
		{"not a duration, and nothing more about it", "review:\n  timeout: soon\n",
			[]string{"mcpx-fw.yaml:2: review.timeout: want a duration such as 250ms or 10m, found a string that is not one"}},
		{"not a bool", "http:\n  allow_remote: maybe\n",
			[]string{"mcpx-fw.yaml:2: http.allow_remote: want true or false, found a string"}},
		{"a number for a section", "policy: 5\n",
			[]string{"mcpx-fw.yaml:1: policy: want a mapping (keys and values), found a whole number"}},
		{"true or false for a section", "policy: true\n",
			[]string{"mcpx-fw.yaml:1: policy: want a mapping (keys and values), found a boolean (true or false)"}},
		{"a date for a duration", "review:\n  timeout: 2026-01-01\n",
			[]string{"mcpx-fw.yaml:2: review.timeout: want a duration such as 250ms or 10m, found a date"}},
		{"a mapping for a list", "isolation:\n  hide: {a: b}\n",
			[]string{"mcpx-fw.yaml:2: isolation.hide: want a list, found a mapping"}},
		{"a list for a string", "servers:\n  x:\n    command: [cat]\n    env: {A: [1]}\n",
			[]string{"mcpx-fw.yaml:4: servers.x.env.A: want a string, found a list"}},
		{"a tracing endpoint in clear", "tracing:\n  otlp:\n    endpoint: http://collector:4318\n",
			[]string{"mcpx-fw.yaml:3: tracing.otlp.endpoint: an http:// endpoint sends spans in clear; set tracing.otlp.insecure: true to allow it"}},
		{"the file is a list", "- servers\n",
			[]string{"mcpx-fw.yaml:1: the file holds a list, where mcpx-fw reads keys such as servers: and policy:"}},
		{"a key written twice", "log:\n  level: info\nlog:\n  level: debug\n",
			[]string{`mcpx-fw.yaml:3: mapping key "log" already defined at line 1`}},
		{"bad indentation", "log:\n  level: info\n    file: x\n",
			[]string{"mcpx-fw.yaml:3: mapping values are not allowed in this context"}},
		{"a check's problem at the key's line", "log:\n  file: x\n  level: loud\n",
			[]string{"mcpx-fw.yaml:3: log.level: want one of debug, info, warn, error"}},
		{"a key the file lacks, at its section", "servers:\n  notes:\n    label: Notes\n",
			[]string{"mcpx-fw.yaml:2: servers.notes.command: required: the command that starts the server (or url for an HTTP server)"}},
		{"a list entry at its line", "servers:\n  a:\n    command: [cat]\n    elicitation:\n      allowed_hosts:\n        - example.com\n        - \"https://auth.example.com\"\n",
			[]string{"mcpx-fw.yaml:7: servers.a.elicitation.allowed_hosts[1]: not a host name (it has a scheme): write the host alone (auth.example.com), without scheme, port, path or wildcard"}},
		{"every problem at once, in the file's order",
			"log:\n  level: loud\nservres: {}\npolicy:\n  default: maybe\n  timeout: soon\nservers:\n  x:\n    command: [cat]\n    max_tokens: lots\n    sampling: false\n    operator_answer: true\n",
			[]string{"mcpx-fw.yaml:2: log.level: want one of debug, info, warn, error",
				"mcpx-fw.yaml:3: unknown key servres (did you mean servers?)",
				"mcpx-fw.yaml:5: policy.default: want one of review, deny, permit",
				"mcpx-fw.yaml:6: policy.timeout: want a duration such as 250ms or 10m, found a string that is not one",
				"mcpx-fw.yaml:10: servers.x.max_tokens: want a whole number, found a string",
				"mcpx-fw.yaml:12: servers.x.operator_answer: answers sampling, which sampling: false never offers this server; drop one of them"}},
		{"checks still run beside an unknown key",
			"servers:\n  x:\n    command: [cat]\n    sampling: false\n    operator_answer: true\n    cmd: [cat]\n",
			[]string{"mcpx-fw.yaml:5: servers.x.operator_answer: answers sampling, which sampling: false never offers this server; drop one of them",
				"mcpx-fw.yaml:6: unknown key servers.x.cmd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			_, err := loadHere(t, tt.content)
			wantLines(t, err, tt.want)
		})
	}
}

// wantLines fails the test unless err is exactly want, one line each.
func wantLines(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Load succeeded, want:\n%s", strings.Join(want, "\n"))
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("error lines (-want +got):\n%s", diff)
	}
}

// TestConfigEnvProblemLines: a bad MCPXFW_* value is placed at the
// variable, not at the file, which may say something else.
func TestConfigEnvProblemLines(t *testing.T) {
	configtest.CleanEnv(t)
	t.Setenv("MCPXFW_POLICY_TIMEOUT", "soon")
	t.Setenv("MCPXFW_LOG_LEVEL", "loud")
	_, err := loadHere(t, "log:\n  level: info\n")
	wantLines(t, err, []string{
		"MCPXFW_LOG_LEVEL: log.level: want one of debug, info, warn, error",
		"MCPXFW_POLICY_TIMEOUT: policy.timeout: want a duration such as 250ms or 10m, found a value that is not one",
	})
}

// TestConfigCommandArgs: a server's command is written as a host's config
// writes it (command and args), or as a list, and a whole command line in
// one string that names no program is refused with the two ways to write
// it.
func TestConfigCommandArgs(t *testing.T) {
	bin := t.TempDir()
	spaced := filepath.Join(bin, "my server")
	if err := os.WriteFile(spaced, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, command string
		want          []string
	}{
		{"command and args, as hosts write them", "command: npx\n    args: [-y, pkg]", []string{"npx", "-y", "pkg"}},
		{"a list", "command: [npx, -y, pkg]", []string{"npx", "-y", "pkg"}},
		{"a list and args", "command: [npx, -y]\n    args: [pkg]", []string{"npx", "-y", "pkg"}},
		{"one word", "command: cat", []string{"cat"}},
		{"a program path with a space", "command: " + spaced, []string{spaced}},
		{"a program on PATH with a space", "command: my server", []string{"my server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			t.Setenv("PATH", bin)
			cfg, err := loadHere(t, "servers:\n  x:\n    "+tt.command+"\n")
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tt.want, cfg.Servers["x"].Command); diff != "" || cfg.Servers["x"].Args != nil {
				t.Errorf("servers.x.command (-want +got):\n%s\nargs %q, want none after Load", diff, cfg.Servers["x"].Args)
			}
		})
	}
}

// TestConfigCommandArgsRefused: what command and args cannot be.
func TestConfigCommandArgsRefused(t *testing.T) {
	tests := []struct {
		name, server string
		want         []string
	}{
		{"a command line in one string", "command: npx -y @modelcontextprotocol/server-everything",
			[]string{"mcpx-fw.yaml:3: servers.x.command: " + commandLineText + ", or as command: npx with args: [-y, pkg]"}},
		{"a command line in a list", "command: [\"uvx mcp-server-git\"]",
			[]string{"mcpx-fw.yaml:3: servers.x.command: " + commandLineText + ", or as command: npx with args: [-y, pkg]"}},
		{"args without command", "args: [-y, pkg]",
			[]string{"mcpx-fw.yaml:2: servers.x.command: required: the command that starts the server (or url for an HTTP server)"}},
		{"args on a url server", "url: https://example.com/mcp\n    args: [-y]",
			[]string{"mcpx-fw.yaml:4: servers.x.args: applies to command only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			t.Setenv("PATH", t.TempDir())
			_, err := loadHere(t, "servers:\n  x:\n    "+tt.server+"\n")
			wantLines(t, err, tt.want)
		})
	}
}

// commandLineText is what a command key holding a whole command line is
// told, before the args form where the key has one.
const commandLineText = "a whole command line in one string, not a program: write it as a list, one word an entry, such as command: [npx, -y, pkg]"

// TestConfigNotifyCommandLine: review.notify.command written as one
// string is explained as servers.<name>.command is, without args, which
// it does not take; a program whose name holds a space is taken.
func TestConfigNotifyCommandLine(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "my notifier"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	configtest.CleanEnv(t)
	t.Setenv("PATH", bin)
	_, err := loadHere(t, "review:\n  notify:\n    command: notify-send mcpx-fw\n")
	wantLines(t, err, []string{"mcpx-fw.yaml:3: review.notify.command: " + commandLineText})
	cfg, err := loadHere(t, "review:\n  notify:\n    command: my notifier\n")
	if err != nil || !slices.Equal(cfg.Review.Notify.Command, []string{"my notifier"}) {
		t.Errorf("a program on PATH whose name holds a space: %v, %v", cfg, err)
	}
}

// TestConfigUnforeseenDecodeError: what UnmarshalExact refuses that
// checkFile and checkEnv did not foresee is still one line a key, placed
// like a check's problem, in the config's words rather than the decoder's.
func TestConfigUnforeseenDecodeError(t *testing.T) {
	settings := map[string]any{"servres": 1, "review": map[string]any{"timeout": "soon"},
		"servers": map[string]any{"x": map[string]any{"cmd": 1}}}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		WeaklyTypedInput: true, ErrorUnused: true, DecodeHook: decodeHooks(), Result: new(Config)})
	if err != nil {
		t.Fatal(err)
	}
	decodeErr := dec.Decode(settings)
	if decodeErr == nil {
		t.Fatal("the decoder took what it must refuse")
	}
	p := &problems{file: "mcpx-fw.yaml"}
	p.unforeseen(decodeErr)
	wantLines(t, p.err(), []string{
		"mcpx-fw.yaml: review.timeout: not a value this key takes",
		"mcpx-fw.yaml: servers.x.cmd: unknown key",
		"mcpx-fw.yaml: servres: unknown key",
	})
}
