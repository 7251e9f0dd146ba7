package main

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestServerDownTypeScriptHost: of two servers, one whose command's script
// is missing and the Go SDK's everything-server, the broken one is that
// server down. A TypeScript SDK host, over stdio and over --http, lists
// and calls the everything-server's tools; a call to the broken one is
// refused naming it; /readyz and status name it down, since when and why.
func TestServerDownTypeScriptHost(t *testing.T) {
	node := nodeSetup(t) // before anything with a deadline: the first run installs
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			missing := filepath.Join(t.TempDir(), "broken-server.sh") // a script not there: sh exits at once
			servers := "  broken:\n" + serverEntry([]string{"/bin/sh", missing}, "    label: broken\n") +
				"  everything:\n" + serverEntry(goEverythingCommand(t), "    label: everything\n")
			cfg := opsConfig(t, repoPath(t, "policies"), servers)
			var host *npmSession
			var ops string
			if mode == "stdio" {
				host = startNPMSession(t, node, "stdio", binary, "serve", "--config", cfg)
				ops = host.stderrLine(t, "mcpx-fw: ops listening on ")
			} else {
				s := startOpsServe(t, cfg)
				host, ops = startNPMSession(t, node, "http", s.url), s.ops
			}
			tools := host.list(t)
			if !slices.Contains(tools, "everything__test_simple_text") || slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "broken__") }) {
				t.Fatalf("tools with broken down: %v; want the everything-server's, none of broken's", tools)
			}
			if r := host.call(t, "everything__test_simple_text", nil); r.Error != nil || !strings.Contains(string(r.Result), "text") {
				t.Errorf("everything__test_simple_text with broken down: %s", mustJSON(t, r))
			}
			r := host.call(t, "broken__echo", map[string]any{"text": "x"})
			if r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "upstream broken is down since") {
				t.Errorf("a call to the down server: %s; want -32603 naming it down", mustJSON(t, r))
			}
			wantNamedDown(t, cfg, ops, "broken")
		})
	}
}

// wantNamedDown checks that /readyz and status name server down, since
// when and why, and no other.
func wantNamedDown(t *testing.T, cfg, ops, server string) {
	t.Helper()
	code, body := get(t, ops+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "upstream "+server+": start failed") || !strings.Contains(body, "(down since ") ||
		strings.Count(body, "down since") != 1 {
		t.Errorf("/readyz = %d %q; want 503 naming upstream %s down since a time, and no other", code, body, server)
	}
	res := runCLI(t, "status", "--config", cfg, "--addr", strings.TrimPrefix(ops, "http://"))
	if !strings.Contains(res.stdout, server) || !strings.Contains(res.stdout, "DOWN since ") || strings.Count(res.stdout, "DOWN") != 1 {
		t.Errorf("status: exit %d\n%s\n%s; want %s DOWN since a time, and no other", res.code, res.stdout, res.stderr, server)
	}
}
