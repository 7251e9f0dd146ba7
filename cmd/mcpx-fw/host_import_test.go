package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
)

// TestImported: a value the host fills in is passed on by name, a value
// written in the host's file is copied (and marks the config secret), and
// a header the host asks its user for is passed on as a variable the
// connected entry's env fills in.
func TestImported(t *testing.T) {
	e, secret, err := imported(hostconfig.Server{Command: "npx", Args: []string{"-y", "pkg"},
		Env: map[string]string{"KEY": "${input:key}", "HOME_DIR": "${env:HOME}"}})
	if err != nil || secret || e.Env["KEY"] != "${KEY}" || e.Env["HOME_DIR"] != "${HOME_DIR}" || strings.Join(e.Command, " ") != "npx -y pkg" {
		t.Errorf("host variables: %+v, secret %v, %v", e, secret, err)
	}
	e, secret, err = imported(hostconfig.Server{URL: "https://x/mcp", Headers: map[string]string{"A": "${env:TOKEN}"}})
	if err != nil || secret || e.Headers["A"] != "${TOKEN}" {
		t.Errorf("header from the environment: %+v, secret %v, %v", e, secret, err)
	}
	if _, secret, _ = imported(hostconfig.Server{Command: "x", Env: map[string]string{"K": "literal"}}); !secret {
		t.Error("a literal env value is not marked secret")
	}
	in := hostconfig.Server{URL: "https://x/mcp", Headers: map[string]string{"Authorization": "Bearer ${input:notes-token}"}}
	if e, secret, err = imported(in); err != nil || secret || e.Headers["Authorization"] != "Bearer ${NOTES_TOKEN}" {
		t.Errorf("a header the host asks its user for: %+v, secret %v, %v", e, secret, err)
	}
	if v := in.HostVars(); v["NOTES_TOKEN"] != "${input:notes-token}" || len(v) != 1 {
		t.Errorf("the connected entry's env for that header: %v", v)
	}
	taken := hostconfig.Server{URL: "https://x/mcp", Headers: map[string]string{"A": "${input:t}"}, Env: map[string]string{"T": "other"}}
	if _, _, err = imported(taken); err == nil {
		t.Error("a header input whose variable an env member of another value takes was imported")
	}
	if e, _, err = imported(hostconfig.Server{Command: "x", Dir: "/srv"}); err != nil || e.Dir != "/srv" {
		t.Errorf("cwd: %+v, %v", e, err)
	}
	if _, _, err = imported(hostconfig.Server{Command: "x", Dir: "${workspaceFolder}"}); err == nil {
		t.Error("a cwd the host fills in was imported")
	}
}

// TestImportKeepsConfig: import adds only the servers the config lacks
// (names compared as the config folds them), keeps the config's comments
// and keys, and leaves out an entry that already starts mcpx-fw serve.
func TestImportKeepsConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", "# our firewall\nstate_dir: state # here\nservers:\n  fetch:\n    command: [uvx, mcp-server-fetch]\n")
	host := writeFile(t, dir, "mcp.json", `{"mcpServers": {"Fetch": {"command": "other"}, "new": {"command": "npx", "args": ["-y", "p"]},
		"wired": {"command": "/bin/mcpx-fw", "args": ["serve", "--config", "x"]}}}`)
	var out bytes.Buffer
	secret, err := importHost(&out, hostFile{host: hostconfig.Hosts["cursor"], path: host}, cfg, false)
	if err != nil || secret {
		t.Fatalf("import: %v, secret %v", err, secret)
	}
	got, _ := os.ReadFile(cfg)
	want := "# our firewall\nstate_dir: state # here\nservers:\n  fetch:\n    command: [uvx, mcp-server-fetch]\n  new:\n    command: [npx, -y, p]\n"
	if string(got) != want {
		t.Errorf("config:\n%s\nwant:\n%s", got, want)
	}
	if info, _ := os.Stat(filepath.Join(dir, "mcpx-fw.yaml")); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
	if !strings.Contains(out.String(), "imported into "+cfg+" from "+host+": new\n") {
		t.Errorf("output %q", out.String())
	}
}

// TestImportKeepsBytes: import writes the servers it adds into the
// config's text, so every byte already there stays (a comment's spacing,
// quoting, a blank line, a top-level comment after servers), and the
// result loads as the config encoded again would; a config with no
// servers key gets one at its end; a flow-style servers mapping, which
// cannot take lines, is encoded again and still loads.
func TestImportKeepsBytes(t *testing.T) {
	host := writeFile(t, t.TempDir(), "mcp.json", `{"mcpServers": {"new": {"command": "npx", "args": ["-y", "p"], "env": {"K": "v"}}}}`)
	for _, tc := range []struct{ name, old, want string }{
		{"block", "state_dir: 'state'   # quoted\nservers:\n    echo:\n        command: [echo]   # keep\n        # about echo\n\n# the log\nlog:\n  level: info\n",
			"state_dir: 'state'   # quoted\nservers:\n    echo:\n        command: [echo]   # keep\n        # about echo\n    new:\n      command: [npx, -y, p]\n      env:\n        K: v\n\n# the log\nlog:\n  level: info\n"},
		{"last", "servers:\n  echo:\n    command: [echo]   # keep", "servers:\n  echo:\n    command: [echo]   # keep\n  new:\n    command: [npx, -y, p]\n    env:\n      K: v\n"},
		{"empty", "state_dir: s   # here\nservers:   # none yet\nlog: {level: info}\n", "state_dir: s   # here\nservers:   # none yet\n  new:\n    command: [npx, -y, p]\n    env:\n      K: v\nlog: {level: info}\n"},
		{"none", "# ours\nstate_dir: s   # here\n", "# ours\nstate_dir: s   # here\nservers:\n  new:\n    command: [npx, -y, p]\n    env:\n      K: v\n"},
		{"missing", "", "servers:\n  new:\n    command: [npx, -y, p]\n    env:\n      K: v\n"},
		{"crlf", "servers:\r\n  echo:\r\n    command: [echo]   # keep\r\n", "servers:\r\n  echo:\r\n    command: [echo]   # keep\r\n  new:\r\n    command: [npx, -y, p]\r\n    env:\r\n      K: v\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "mcpx-fw.yaml")
			if tc.old != "" {
				writeFile(t, filepath.Dir(cfg), "mcpx-fw.yaml", tc.old)
			}
			if _, err := importHost(&bytes.Buffer{}, hostFile{host: hostconfig.Hosts["cursor"], path: host}, cfg, false); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(cfg); string(got) != tc.want {
				t.Errorf("config:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	cfg := writeFile(t, t.TempDir(), "mcpx-fw.yaml", "servers: {echo: {command: [echo]}}\n")
	if _, err := importHost(&bytes.Buffer{}, hostFile{host: hostconfig.Hosts["cursor"], path: host}, cfg, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(cfg); !sameConfig(got, []byte("servers: {echo: {command: [echo]}, new: {command: [npx, -y, p], env: {K: v}}}")) {
		t.Errorf("flow style:\n%s", got)
	}
}

// TestMaskConfig: every env and headers value of mcpx-fw's config,
// however written (plain, quoted, flow, a block scalar, quoted over
// lines, through an alias, keys in any case), is hidden; the rest of each
// line stays, and so does the number of lines.
func TestMaskConfig(t *testing.T) {
	data := "x: &tok aliased-secret\nservers:\n  a:\n    command: [echo, env]   # keep\n    env: {K: \"s1 \\\" x\", Q: 's2''y', P: s3}\n" +
		"    Headers:\n      A: Bearer s4 # c\n      B: |\n        s5\n        s6\n      C: \"s7\n        s8\"\n      D: *tok\n  b:\n    ENV:\n      E: s9\n"
	got := string(maskConfig("c", []byte(data)))
	for _, s := range []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "aliased-secret"} {
		if strings.Contains(got, s) {
			t.Errorf("%s shown:\n%s", s, got)
		}
	}
	for _, keep := range []string{"command: [echo, env]   # keep", `env: {K: «hidden: 6 characters», Q: «hidden: 4 characters», P: «hidden: 2 characters»}`, "A: «hidden: 9 characters» # c", "D: *tok", "  b:\n"} {
		if !strings.Contains(got, keep) {
			t.Errorf("%q not kept:\n%s", keep, got)
		}
	}
	if strings.Count(got, "\n") != strings.Count(data, "\n") {
		t.Errorf("lines:\n%s", got)
	}
	if got := string(maskConfig("c", []byte("servers: [\n  env: s1\n"))); strings.Contains(got, "s1") {
		t.Errorf("a file that is not YAML shown: %s", got)
	}
}
