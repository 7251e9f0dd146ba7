package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
)

// claudeWrites are Claude Code's own writes to ~/.claude.json as it
// runs, outside every server entry: a count, a history entry appended, a
// project added.
func claudeWrites(t *testing.T, data []byte) []byte {
	t.Helper()
	s := string(data)
	for _, e := range [][2]string{
		{`"numStartups": 184`, `"numStartups": 185`},
		{`"pastedContents": {}}`, `"pastedContents": {}}, {"display": "and the refunds?", "pastedContents": {}}`},
		{`"projects": {`, `"projects": {"/srv/new": {"allowedTools": [], "mcpServers": {}},`},
	} {
		if strings.Count(s, e[0]) != 1 {
			t.Fatalf("%q is not in the file once", e[0])
		}
		s = strings.Replace(s, e[0], e[1], 1)
	}
	return []byte(s)
}

// TestHostDisconnectClaudeState: ~/.claude.json connected in user scope
// and a project's local scope, then written by Claude Code: disconnect
// --project puts back that project's entries alone, keeping Claude Code's
// writes, the user scope connected and the backup; disconnect of the user
// scope then gives the original file with Claude Code's writes and
// removes the backup; a third disconnect says nothing is connected.
func TestHostDisconnectClaudeState(t *testing.T) {
	home, shop, file, original := claudeUserFile(t)
	cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, "")
	user := []string{"--host-config", file}
	for _, scope := range [][]string{user, {"--project", "."}} {
		if res := hostRun(t, home, shop, append([]string{"host", "connect", "claude-code", "--config", cfg}, scope...)...); res.code != 0 {
			t.Fatalf("connect %v: exit %d: %s", scope, res.code, res.stderr)
		}
	}
	now, _ := os.ReadFile(file)
	if err := os.WriteFile(file, claudeWrites(t, now), 0o600); err != nil {
		t.Fatal(err)
	}
	userOnly, err := hostconfig.Hosts["claude-code"].Connect(original, hostconfig.Serve{Binary: binaryPath(t), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	disconnected(t, home, shop, []string{"--project", "."}, "postgres, sentry start as before connect; "+hostconfig.BackupPath(file)+" is kept", claudeWrites(t, userOnly))
	disconnected(t, home, shop, user, "memory start as before connect; "+hostconfig.BackupPath(file)+" is removed", claudeWrites(t, original))
	if _, err := os.Stat(hostconfig.BackupPath(file)); !os.IsNotExist(err) {
		t.Errorf("backup left: %v", err)
	}
	disconnected(t, home, shop, user, "nothing connected by mcpx-fw to disconnect", claudeWrites(t, original))
}

// disconnected runs disconnect of the scope and checks its output and,
// unless want is nil, the file it leaves.
func disconnected(t *testing.T, home, dir string, scope []string, say string, want []byte) {
	t.Helper()
	file := filepath.Join(home, ".claude.json")
	res := hostRun(t, home, dir, append([]string{"host", "disconnect", "claude-code"}, scope...)...)
	if res.code != 0 || !strings.Contains(res.stdout, say) {
		t.Fatalf("disconnect %v: exit %d, want %q:\n%s%s", scope, res.code, say, res.stdout, res.stderr)
	}
	if got, _ := os.ReadFile(file); want != nil && !bytes.Equal(got, want) {
		t.Errorf("disconnect %v:\n%s", scope, hostconfig.Diff(file, want, got))
	}
}

// TestHostDisconnectEditedEntry: an entry connect wrote and the user
// edited since stops disconnect (and its --dry-run) with one line naming
// the server and FILE:LINE, the file unchanged; --force restores the
// whole backup.
func TestHostDisconnectEditedEntry(t *testing.T) {
	home, shop, file, original := claudeUserFile(t)
	cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, "")
	if res := hostRun(t, home, shop, "host", "connect", "claude-code", "--project", ".", "--config", cfg); res.code != 0 {
		t.Fatalf("connect: exit %d: %s", res.code, res.stderr)
	}
	now, _ := os.ReadFile(file)
	edited := bytes.Replace(now, []byte("\"--server\",\n            \"postgres\""), []byte("\"--server\",\n            \"postgres\",\n            \"--verbose\""), 1)
	if bytes.Equal(edited, now) {
		t.Fatal("no postgres entry to edit")
	}
	if err := os.WriteFile(file, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	line := bytes.Count(edited[:bytes.Index(edited, []byte(`"postgres": {`))], []byte("\n")) + 1
	want := file + ":" + strconv.Itoa(line) + `: server "postgres" of projects["` + shop + `"].mcpServers was changed since connect`
	for _, flags := range [][]string{nil, {"--dry-run"}} {
		res := hostRun(t, home, shop, append([]string{"host", "disconnect", "claude-code", "--project", "."}, flags...)...)
		got, _ := os.ReadFile(file)
		if res.code != 1 || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "--force") || !oneLine(res.stderr) || !bytes.Equal(got, edited) {
			t.Errorf("disconnect %v: exit %d, changed %v, stderr %q", flags, res.code, !bytes.Equal(got, edited), res.stderr)
		}
	}
	res := hostRun(t, home, shop, "host", "disconnect", "claude-code", "--project", ".", "--force")
	if got, _ := os.ReadFile(file); res.code != 0 || !bytes.Equal(got, original) {
		t.Errorf("--force: exit %d: %s\n%s", res.code, res.stderr, hostconfig.Diff(file, original, got))
	}
}

// TestHostConnectRefreshesBackup: a connect of another scope, after the
// host changed that scope's server since the first connect, brings the
// backup up to date, so disconnect puts back the server as it was at that
// connect, not as it was at the first.
func TestHostConnectRefreshesBackup(t *testing.T) {
	home, shop, file, original := claudeUserFile(t)
	cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, "")
	if res := hostRun(t, home, shop, "host", "connect", "claude-code", "--host-config", file, "--config", cfg); res.code != 0 {
		t.Fatalf("connect: exit %d: %s", res.code, res.stderr)
	}
	changes := func(data []byte) []byte {
		data = bytes.Replace(data, []byte(`"postgresql://localhost/shop"`), []byte(`"postgresql://localhost/shop2"`), 1)
		return bytes.Replace(data, []byte(`"numStartups": 184`), []byte(`"numStartups": 190`), 1)
	}
	now, _ := os.ReadFile(file)
	if err := os.WriteFile(file, changes(now), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := hostRun(t, home, shop, "host", "connect", "claude-code", "--project", ".", "--config", cfg); res.code != 0 {
		t.Fatalf("connect --project: exit %d: %s", res.code, res.stderr)
	}
	disconnected(t, home, shop, []string{"--project", "."}, "postgres, sentry start as before connect", nil)
	if got, _ := os.ReadFile(file); !bytes.Contains(got, []byte(`"postgresql://localhost/shop2"`)) {
		t.Errorf("postgres as it was at the first connect:\n%s", hostconfig.Diff(file, changes(original), got))
	}
	disconnected(t, home, shop, []string{"--host-config", file}, "is removed", changes(original))
}
