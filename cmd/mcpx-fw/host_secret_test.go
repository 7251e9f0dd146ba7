package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
)

// The canaries: a key in a host's env, a token in an HTTP server's
// headers, and a key already in mcpx-fw's config. None may reach a
// terminal.
const (
	canaryEnv    = "ghp_canary123"
	canaryHeader = "Bearer canary456"
	canaryConfig = "canary789"
)

// canaryFile is a host's file in its own format with a stdio server
// holding canaryEnv in env and an HTTP server holding canaryHeader.
func canaryFile(host string) string {
	key, typed := "mcpServers", host == "claude-code" || host == "vscode"
	if host == "vscode" {
		key = "servers"
	}
	stdio, http := "", ""
	if typed {
		stdio, http = `"type": "stdio", `, `"type": "http", `
	}
	return fmt.Sprintf(`{
  "theme": "dark",
  %q: {
    "github": {
      %s"command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": %q}
    },
    "notes": {
      %s"url": "https://mcp.example.com/mcp",
      "headers": {
        "Authorization": %q
      }
    }
  }
}
`, key, stdio, canaryEnv, http, canaryHeader)
}

// canaryConfigFile is mcpx-fw's config with a server whose env holds
// canaryConfig, last under servers: the lines a diff shows around the
// servers import adds.
const canaryConfigFile = "state_dir: state\nservers:\n  echo:\n    command: [echo]   # keep\n    env: {OLD_TOKEN: \"" + canaryConfig + "\"}\n"

// TestHostSecretsNeverPrinted is the attacker's test of the host
// commands: with canary secrets in env and headers of every host's file,
// and in mcpx-fw's config, no run of import, connect or disconnect, with
// or without --dry-run, prints one, on stdout or stderr; the dry runs
// show each as its length, and the files written get the real values.
func TestHostSecretsNeverPrinted(t *testing.T) {
	for _, host := range hostconfig.Names() {
		t.Run(host, func(t *testing.T) {
			home, dir := t.TempDir(), t.TempDir()
			file := writeFile(t, dir, "host.json", canaryFile(host))
			cfg := writeFile(t, dir, "mcpx-fw.yaml", canaryConfigFile)
			var printed strings.Builder
			run := func(args ...string) cliResult {
				res := hostRun(t, home, dir, append(args, "--host-config", file)...)
				printed.WriteString(res.stdout + res.stderr)
				if res.code != 0 {
					t.Errorf("%v: exit %d: %s", args, res.code, res.stderr)
				}
				return res
			}
			dry := run("host", "import", host, "--config", cfg, "--dry-run").stdout
			dry += run("host", "connect", host, "--config", cfg, "--dry-run").stdout
			for _, want := range []string{hostconfig.Hidden(canaryEnv), hostconfig.Hidden(canaryHeader), hostconfig.Hidden(canaryConfig)} {
				if !strings.Contains(dry, want) {
					t.Errorf("the dry runs do not show %s:\n%s", want, dry)
				}
			}
			run("host", "import", host, "--config", cfg)
			run("host", "connect", host, "--config", cfg, "--dry-run")
			run("host", "connect", host, "--config", cfg)
			run("host", "connect", host, "--config", cfg)
			if got := run("host", "disconnect", host, "--dry-run").stdout; !strings.Contains(got, hostconfig.Hidden(canaryEnv)) {
				t.Errorf("disconnect --dry-run shows no hidden value:\n%s", got)
			}
			run("host", "disconnect", host)
			run("host", "connect", host, "--config", cfg)
			run("host", "disconnect", host, "--force", "--dry-run")
			run("host", "disconnect", host, "--force")
			for _, canary := range []string{"canary123", "canary456", "canary789"} {
				if strings.Contains(printed.String(), canary) {
					t.Errorf("%s printed:\n%s", canary, printed.String())
				}
			}
			config, _ := os.ReadFile(cfg)
			original, _ := os.ReadFile(file)
			if !bytes.Contains(config, []byte(canaryEnv)) || !bytes.Contains(config, []byte(canaryHeader)) || string(original) != canaryFile(host) {
				t.Errorf("the files do not hold the real values:\n%s\n%s", config, original)
			}
		})
	}
}

// TestHostBackupMode: the backup holds the host's secrets, so connect
// writes it 0600 whatever the host file's mode (0644 here), and narrows
// a backup already there; the config stays 0600.
func TestHostBackupMode(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	file := writeFile(t, dir, "mcp.json", canaryFile("cursor"))
	cfg := filepath.Join(dir, "mcpx-fw.yaml")
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := hostRun(t, home, dir, "host", "connect", "cursor", "--host-config", file, "--config", cfg); res.code != 0 {
		t.Fatalf("connect: exit %d: %s", res.code, res.stderr)
	}
	modes := func() (bak, config, host os.FileMode) {
		b, _ := os.Stat(hostconfig.BackupPath(file))
		c, _ := os.Stat(cfg)
		h, _ := os.Stat(file)
		return b.Mode().Perm(), c.Mode().Perm(), h.Mode().Perm()
	}
	if bak, config, host := modes(); bak != 0o600 || config != 0o600 || host != 0o644 {
		t.Errorf("backup %v, config %v, host's file %v: want 0600, 0600, 0644", bak, config, host)
	}
	if err := os.Chmod(hostconfig.BackupPath(file), 0o644); err != nil { // as a connect of before wrote it
		t.Fatal(err)
	}
	now, _ := os.ReadFile(file)
	added := bytes.Replace(now, []byte(`"notes": {`), []byte(`"more": {"command": "x"}, "notes": {`), 1)
	if err := os.WriteFile(file, added, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := hostRun(t, home, dir, "host", "connect", "cursor", "--host-config", file, "--config", cfg); res.code != 0 {
		t.Fatalf("connect again: exit %d: %s", res.code, res.stderr)
	}
	if bak, _, _ := modes(); bak != 0o600 {
		t.Errorf("backup already there left %v", bak)
	}
}

// TestHostGitWarning: connect in a git work tree writes the config and
// the backup, both holding a key, there; each not ignored gets one
// warning line naming it and what to add to .gitignore. Ignored, or with
// no git on PATH, nothing is said.
func TestHostGitWarning(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	home, repo := t.TempDir(), t.TempDir()
	if res := mustRun(t, exec.Command(git, "init", "-q", repo)); res.code != 0 {
		t.Fatalf("git init: %s", res.stderr)
	}
	file := writeFile(t, repo, filepath.Join(".vscode", "mcp.json"), canaryFile("vscode"))
	connect := []string{"host", "connect", "vscode", "--config", "mcpx-fw.yaml"}
	res := hostRun(t, home, repo, connect...)
	for _, want := range []string{
		"warning: mcpx-fw.yaml holds keys or tokens and is in the git work tree ",
		"not ignored: add /mcpx-fw.yaml to ",
		"warning: " + hostconfig.BackupPath(file) + " holds keys or tokens",
		"not ignored: add /.vscode/mcp.json.mcpx-fw.bak to ",
	} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("connect: exit %d, want %q:\n%s%s", res.code, want, res.stdout, res.stderr)
		}
	}
	if n := strings.Count(res.stdout, "warning:"); n != 2 {
		t.Errorf("%d warnings, want 2:\n%s", n, res.stdout)
	}
	hostRun(t, home, repo, "host", "disconnect", "vscode")
	writeFile(t, repo, ".gitignore", "/mcpx-fw.yaml\n*.mcpx-fw.bak\n")
	if res := hostRun(t, home, repo, connect...); res.code != 0 || strings.Contains(res.stdout, "warning") {
		t.Errorf("ignored: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	hostRun(t, home, repo, "host", "disconnect", "vscode")
	if err := os.Remove(filepath.Join(repo, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), binary, connect...)
	cmd.Dir, cmd.Env = repo, append(os.Environ(), "HOME="+home, "PATH="+t.TempDir())
	if res := mustRun(t, cmd); res.code != 0 || strings.Contains(res.stdout, "warning") {
		t.Errorf("no git on PATH: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestHostGitRunsNoRepoProgram: the git work tree connect writes into
// may come from anyone; the question whether git ignores a file runs no
// program its config names (core.fsmonitor), and still warns.
func TestHostGitRunsNoRepoProgram(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	home, repo, dir := t.TempDir(), t.TempDir(), t.TempDir()
	mark := filepath.Join(dir, "ran")
	hook := writeFile(t, dir, "fsmonitor", "#!/bin/sh\ntouch "+mark+"\n")
	if err := os.Chmod(hook, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", repo}, {"-C", repo, "config", "core.fsmonitor", hook}} {
		if res := mustRun(t, exec.Command(git, args...)); res.code != 0 {
			t.Fatalf("git %v: %s", args, res.stderr)
		}
	}
	writeFile(t, repo, filepath.Join(".vscode", "mcp.json"), canaryFile("vscode"))
	res := hostRun(t, home, repo, "host", "connect", "vscode", "--config", "mcpx-fw.yaml")
	if _, err := os.Stat(mark); err == nil || res.code != 0 || strings.Count(res.stdout, "warning:") != 2 {
		t.Errorf("the repository's program ran: %v; exit %d:\n%s%s", err == nil, res.code, res.stdout, res.stderr)
	}
}
