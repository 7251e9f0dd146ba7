package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
)

// hostRun runs the binary in dir with HOME at home, as a user whose
// ~/.claude.json is there.
func hostRun(t *testing.T, home, dir string, args ...string) cliResult {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "HOME="+home)
	return mustRun(t, cmd)
}

// TestHostProjectScope: --project wires one project's servers of
// ~/.claude.json (the local scope): --dry-run prints the diff and changes
// nothing; connect rewrites only that project's entries, imports only its
// servers and keeps its secret out of the file; a second connect changes
// nothing; disconnect gives the bytes back.
func TestHostProjectScope(t *testing.T) {
	home, shop, file, original := claudeUserFile(t)
	cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, "")
	connect := []string{"host", "connect", "claude-code", "--project", ".", "--config", cfg}

	res := hostRun(t, home, shop, append(connect, "--dry-run")...)
	if now, _ := os.ReadFile(file); res.code != 0 || !bytes.Equal(now, original) ||
		!strings.Contains(res.stdout, `-          "command": "npx",`) || !strings.Contains(res.stdout, `+            "sentry"`) {
		t.Fatalf("dry run: exit %d, changed %v:\n%s%s", res.code, !bytes.Equal(now, original), res.stdout, res.stderr)
	}
	res = hostRun(t, home, shop, connect...)
	want := `connected claude-code (` + file + ` projects["` + shop + `"].mcpServers): postgres, sentry start through mcpx-fw serve`
	if res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Fatalf("connect: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	connected, _ := os.ReadFile(file)
	h, _ := hostconfig.Hosts["claude-code"].Project(shop)
	if changed, err := h.ChangedSince(original, connected); err != nil || changed != "" || bytes.Contains(connected, []byte("fixture-pg-password")) {
		t.Errorf("outside the project's entries: %q, %v; secret left: %v", changed, err, bytes.Contains(connected, []byte("fixture-pg-password")))
	}
	if got, _ := os.ReadFile(cfg); !bytes.Contains(got, []byte("postgres:")) || !bytes.Contains(got, []byte("sentry:")) || bytes.Contains(got, []byte("memory:")) {
		t.Errorf("config:\n%s", got)
	}
	if res = hostRun(t, home, shop, connect...); res.code != 0 || !strings.Contains(res.stdout, "already connected") {
		t.Errorf("second connect: exit %d: %s%s", res.code, res.stdout, res.stderr)
	}
	if res = hostRun(t, home, shop, "host", "disconnect", "claude-code", "--project", shop); res.code != 0 {
		t.Fatalf("disconnect: exit %d: %s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, original) {
		t.Errorf("disconnect:\n%s", hostconfig.Diff(file, original, got))
	}
}

// claudeUserFile is a home folder holding the ~/.claude.json fixture of
// hostconfig, its projects under home, and the project src/shop in it.
func claudeUserFile(t *testing.T) (home, shop, file string, original []byte) {
	t.Helper()
	home = t.TempDir()
	shop = filepath.Join(home, "src", "shop")
	if err := os.MkdirAll(shop, 0o700); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join("internal", "hostconfig", "testdata", "claude-user.json"))
	if err != nil {
		t.Fatal(err)
	}
	original = bytes.ReplaceAll(fixture, []byte(`"/home/me`), []byte(`"`+home))
	return home, shop, writeFile(t, home, ".claude.json", string(original)), original
}

// TestHostJSONC: VS Code's file with comments and trailing commas
// connects with its comments kept and disconnects to its bytes; a comment
// in Cursor's strict-JSON file is one line naming FILE:LINE.
func TestHostJSONC(t *testing.T) {
	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("internal", "hostconfig", "testdata", "vscode-comments.json"))
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, dir, "mcp.json", string(fixture))
	cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, "")
	if res := runCLI(t, "host", "connect", "vscode", "--host-config", file, "--config", cfg); res.code != 0 {
		t.Fatalf("connect: exit %d: %s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(file); !bytes.Contains(got, []byte("/* \"playwright\"")) || !bytes.Contains(got, []byte("--server")) {
		t.Errorf("connected:\n%s", got)
	}
	if res := runCLI(t, "host", "disconnect", "vscode", "--host-config", file); res.code != 0 {
		t.Fatalf("disconnect: exit %d: %s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, fixture) {
		t.Errorf("disconnect:\n%s", hostconfig.Diff(file, fixture, got))
	}
	cursor := writeFile(t, dir, "cursor.json", "{\n  \"mcpServers\": {\n    // off: \"b\": {\"command\": \"y\"},\n    \"a\": {\"command\": \"x\"}\n  }\n}\n")
	res := runCLI(t, "host", "import", "cursor", "--host-config", cursor, "--config", cfg)
	want := cursor + ":3: a comment, which cursor does not accept: its file is strict JSON\n"
	if res.code != 1 || !strings.HasSuffix(res.stderr, want) || !oneLine(res.stderr) {
		t.Errorf("cursor file with a comment: exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestHostProjectUsage: --project is Claude Code's alone, and a project
// ~/.claude.json does not hold is named.
func TestHostProjectUsage(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, ".claude.json", `{"projects": {"/elsewhere": {"mcpServers": {"a": {"command": "x"}}}}}`)
	res := hostRun(t, home, home, "host", "import", "cursor", "--project", home)
	if res.code != 2 || !strings.Contains(res.stderr, "cursor has no project scope") || !oneLine(res.stderr) {
		t.Errorf("cursor --project: exit %d, stderr %q", res.code, res.stderr)
	}
	res = hostRun(t, home, home, "host", "import", "claude-code", "--project", home)
	want := `no servers under projects["` + home + `"].mcpServers: nothing to wire (is it claude-code's file, and the folder Claude Code was started in?)`
	if res.code != 1 || !strings.Contains(res.stderr, want) || !oneLine(res.stderr) {
		t.Errorf("a project the file lacks: exit %d, stderr %q", res.code, res.stderr)
	}
}
