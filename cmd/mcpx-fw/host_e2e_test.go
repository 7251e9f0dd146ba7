package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// hostSecret is a key in a host's env: it must reach mcpx-fw's config
// (0600) and never a command line.
const hostSecret = "ghp_e2e_secret_value"

// hostSecretHeader is a token in a host's HTTP server entry: it goes the
// same way as hostSecret.
const hostSecretHeader = "e2e-header-token"

// claudeCodeFile is a Claude Code .mcp.json with two stdio servers (one
// with env), a streamable HTTP server at url with a header, and a key of
// the file's own.
func claudeCodeFile(t *testing.T, url string) (string, []byte) {
	t.Helper()
	data := fmt.Appendf(nil, `{
  "mcpServers": {
    "alpha": {
      "type": "stdio",
      "command": %q,
      "env": {"PEER_TOKEN": %q}
    },
    "beta": {"type": "stdio", "command": %q, "args": []},
    "web": {
      "type": "http",
      "url": %q,
      "headers": {"X-Peer-Token": %q}
    }
  },
  "$comment": "kept as it is"
}
`, upstreamBinary, hostSecret, upstreamBinary, url, hostSecretHeader)
	return writeFile(t, t.TempDir(), ".mcp.json", string(data)), data
}

// TestHostConnectServes: after host connect, each rewritten entry (two
// stdio servers and an HTTP one), started by a test host as the host would
// start it, lists the same tool names as the server did directly and has
// its sampling decided by the policy; the secrets are in no command line;
// disconnect gives the file's bytes back.
func TestHostConnectServes(t *testing.T) {
	url := startHTTPUpstream(t, "-require-header", "X-Peer-Token: "+hostSecretHeader)
	file, original := claudeCodeFile(t, url)
	cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, "")
	direct := map[string][]string{
		"stdio": toolNames(t, peer.HostOptions{Command: []string{upstreamBinary}}),
		// the same program over HTTP, with no header to ask for
		"http": httpToolNames(t, startHTTPUpstream(t)),
	}
	if res := runCLI(t, "host", "connect", "claude-code", "--host-config", file, "--config", cfg); res.code != 0 {
		t.Fatalf("connect: exit %d: %s", res.code, res.stderr)
	}
	connected, _ := os.ReadFile(file)
	if bytes.Contains(connected, []byte(hostSecret)) || bytes.Contains(connected, []byte(hostSecretHeader)) {
		t.Error("a secret of the host's is still in its file, in a command line")
	}
	if info, _ := os.Stat(cfg); info.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", info.Mode().Perm())
	}
	servers, err := hostconfig.Hosts["claude-code"].Parse(connected)
	if err != nil || len(servers) != 3 {
		t.Fatalf("connected file: %d servers, %v", len(servers), err)
	}
	hosts := map[string]*peer.Host{} // every entry running at once, as in the host
	for _, s := range servers {
		hosts[s.Name] = startEntry(t, s)
	}
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) {
			want := direct["stdio"]
			if s.Name == "web" {
				want = direct["http"]
			}
			if got := listTools(t, hosts[s.Name]); !slices.Equal(got, want) {
				t.Errorf("through mcpx-fw: %q, directly: %q", got, want)
			}
			sampleDecided(t, hosts[s.Name])
		})
	}
	if res := runCLI(t, "host", "disconnect", "claude-code", "--host-config", file); res.code != 0 {
		t.Fatalf("disconnect: exit %d: %s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, original) {
		t.Errorf("disconnect did not give the original bytes back:\n%s", hostconfig.Diff(file, original, got))
	}
}

// startEntry starts a host's entry as the host does, with a host that
// answers sampling.
func startEntry(t *testing.T, s hostconfig.Server) *peer.Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: append([]string{s.Command}, s.Args...), Answer: answerWith(hostAnswer), Tools: true})
	if err != nil {
		t.Fatalf("start %s: %v", s.Name, err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// sampleDecided: a request over the server's cap is denied by the policy
// before the host is asked, and a plain one reaches the host.
func sampleDecided(t *testing.T, h *peer.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	got, err := h.Sample(ctx, json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":99999}`))
	if err != nil {
		t.Fatal(err)
	}
	checkOutcome(t, got, -1, "User rejected sampling request")
	if got, err = h.Sample(ctx, json.RawMessage(plainRequest)); err != nil {
		t.Fatal(err)
	}
	checkOutcome(t, got, 0, "")
	if len(h.Asked) != 1 {
		t.Errorf("the host was asked %d times, want once", len(h.Asked))
	}
}

func toolNames(t *testing.T, opts peer.HostOptions) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	h, err := peer.StartHost(ctx, opts)
	if err != nil {
		t.Fatalf("start %s: %v", strings.Join(opts.Command, " "), err)
	}
	defer h.Close()
	return listTools(t, h)
}

func listTools(t *testing.T, h *peer.Host) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	names, err := h.ToolNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func httpToolNames(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	h, err := peer.ConnectHTTP(ctx, url, peer.HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	return listTools(t, h.Host)
}

// TestHostDryRun: --dry-run prints the diffs and changes neither file;
// connect twice is connect once; disconnect --dry-run of a file the host
// changed since prints only the entries, and disconnect keeps the host's
// change.
func TestHostDryRun(t *testing.T) {
	file, original := claudeCodeFile(t, "https://mcp.example.com/mcp")
	cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, "")
	cfgBefore, _ := os.ReadFile(cfg)
	res := runCLI(t, "host", "connect", "claude-code", "--host-config", file, "--config", cfg, "--dry-run")
	if res.code != 0 || !strings.Contains(res.stdout, "+  alpha:") || !strings.Contains(res.stdout, `+      "args": [`) {
		t.Fatalf("dry run: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	got, _ := os.ReadFile(file)
	cfgAfter, _ := os.ReadFile(cfg)
	if !bytes.Equal(got, original) || !bytes.Equal(cfgBefore, cfgAfter) {
		t.Error("--dry-run changed a file")
	}
	if _, err := os.Stat(hostconfig.BackupPath(file)); !os.IsNotExist(err) {
		t.Errorf("--dry-run left a backup: %v", err)
	}
	runCLI(t, "host", "connect", "claude-code", "--host-config", file, "--config", cfg)
	once, _ := os.ReadFile(file)
	cfgOnce, _ := os.ReadFile(cfg)
	res = runCLI(t, "host", "connect", "claude-code", "--host-config", file, "--config", cfg)
	twice, _ := os.ReadFile(file)
	cfgTwice, _ := os.ReadFile(cfg)
	if res.code != 0 || !bytes.Equal(once, twice) || !bytes.Equal(cfgOnce, cfgTwice) || !strings.Contains(res.stdout, "already connected") {
		t.Errorf("a second connect: exit %d, file same %v, config same %v: %s", res.code, bytes.Equal(once, twice), bytes.Equal(cfgOnce, cfgTwice), res.stdout)
	}
	changed := bytes.Replace(once, []byte(`"kept as it is"`), []byte(`"the host's own edit"`), 1)
	if err := os.WriteFile(file, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, "host", "disconnect", "claude-code", "--host-config", file, "--dry-run")
	if now, _ := os.ReadFile(file); res.code != 0 || !bytes.Equal(now, changed) || !strings.Contains(res.stdout, "-      \"command\": \""+binaryPath(t)) ||
		strings.Contains(res.stdout, "kept as it is") {
		t.Errorf("disconnect --dry-run: exit %d, changed %v:\n%s", res.code, !bytes.Equal(now, changed), res.stdout)
	}
	res = runCLI(t, "host", "disconnect", "claude-code", "--host-config", file)
	want := bytes.Replace(original, []byte(`"kept as it is"`), []byte(`"the host's own edit"`), 1)
	if now, _ := os.ReadFile(file); res.code != 0 || !bytes.Equal(now, want) {
		t.Errorf("disconnect of a file the host changed: exit %d: %s\n%s", res.code, res.stderr, hostconfig.Diff(file, want, now))
	}
}

// TestHostUsage: an unknown host, a file that is not there and a server
// the config lacks are one line each.
func TestHostUsage(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, peerServer("peer", 1000))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"host", "connect", "zed"}, 2, `mcpx-fw: unknown host "zed" (want one of claude-code, claude-desktop, cursor, vscode)`},
		{[]string{"host", "import", "cursor", "--host-config", filepath.Join(dir, "none.json")}, 1, "none.json: no such file (name the host's file with --host-config)"},
		{[]string{"host", "disconnect", "vscode", "--host-config", filepath.Join(dir, "mcp.json")}, 1, "mcp.json: no backup"},
		{[]string{"host", "connect", "vscode", "--host-config", writeFile(t, dir, "cursor.json", `{"mcpServers": {"a": {"command": "x"}}}`)}, 1,
			`cursor.json: no servers under "servers": nothing to wire (is it vscode's file?)`},
		{[]string{"serve", "--config", cfg, "--server", "nope"}, 2, "--server nope: config " + cfg + " has no such server (it has peer)"},
	} {
		res := runCLI(t, tc.args...)
		if res.code != tc.code || !strings.Contains(res.stderr, tc.want) || !oneLine(res.stderr) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, res.code, res.stderr)
		}
	}
}

func binaryPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(binary)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
