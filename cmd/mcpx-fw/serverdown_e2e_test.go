package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServerDownTypeScriptHost: of two servers, one whose command's script
// is missing and the Go SDK's everything-server, the broken one is that
// server down. A TypeScript SDK host, over stdio and over --http, lists
// and calls the everything-server's tools; a call to the broken one is
// refused naming it; /readyz and status name it down, since when and why.
// Once its script is restored it comes back and the host hears
// tools/list_changed; killed (SIGKILL) with a call in flight, that call
// gets a clear error, the everything-server keeps serving, and it comes
// back again, each restart logged once.
func TestServerDownTypeScriptHost(t *testing.T) {
	node := nodeSetup(t) // before anything with a deadline: the first run installs
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			// broken's script is not there: sh exits at once. It runs
			// without isolation, so its pid is the test's to kill.
			missing := filepath.Join(t.TempDir(), "broken-server.sh")
			servers := "  broken:\n" + serverEntry([]string{"/bin/sh", missing}, "    label: broken\n    isolation: none\n") +
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

			// Restored, it comes back: the host hears tools/list_changed.
			pidFile := filepath.Join(t.TempDir(), "pid")
			restored := fmt.Sprintf("#!/bin/sh\necho $$ > %s\nexec %s\n", pidFile, upstreamBinary)
			if err := os.WriteFile(missing, []byte(restored), 0o755); err != nil {
				t.Fatal(err)
			}
			wantHeardBack(t, host)
			serveLog := filepath.Join(filepath.Dir(cfg), "serve.log")
			waitFor(t, "/readyz ready once broken is back", func() bool { code, _ := get(t, ops+"/readyz"); return code == http.StatusOK })

			// Killed (SIGKILL) while a call to it is in flight: that call
			// gets a clear error, the everything-server keeps serving, and
			// broken comes back, its restart logged once.
			b, err := os.ReadFile(pidFile)
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || perr != nil {
				t.Fatalf("broken's pid: %q, %v, %v", b, err, perr)
			}
			held := host.send(t, map[string]any{"op": "call", "name": "broken__progress", "arguments": map[string]any{"steps": 2, "hold": "h"}, "progress": true})
			waitEvent(t, host, "progress") // its first step: the call is with broken, held
			if err := killProcess(pid); err != nil {
				t.Fatal(err)
			}
			if r := <-held; r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "upstream broken is gone: its connection was lost during the call") {
				t.Errorf("the call in flight when broken was killed: %s; want -32603 naming it gone", mustJSON(t, r))
			}
			if r := host.call(t, "everything__test_simple_text", nil); r.Error != nil {
				t.Errorf("everything__test_simple_text after broken was killed: %s", mustJSON(t, r))
			}
			wantHeardBack(t, host)
			if n := strings.Count(readFile(t, serveLog), `"msg":"upstream restarted"`); n != 2 {
				t.Errorf("serve logged %d restarts, want 2 (restored, then killed): once each", n)
			}
		})
	}
}

// wantHeardBack waits until the host hears tools/list_changed with
// broken's tools listed, and calls one.
func wantHeardBack(t *testing.T, host *npmSession) {
	t.Helper()
	for listed := false; !listed; {
		waitEvent(t, host, "tools/list_changed")
		listed = slices.Contains(host.list(t), "broken__echo")
	}
	if r := host.call(t, "broken__echo", map[string]any{"text": "back"}); r.Error != nil || !strings.Contains(string(r.Result), "back") {
		t.Errorf("broken__echo once it came back: %s", mustJSON(t, r))
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

// waitEvent waits until the host hears a notification of method.
func waitEvent(t *testing.T, host *npmSession, method string) {
	t.Helper()
	for {
		select {
		case e := <-host.events:
			if e == method {
				return
			}
		case <-time.After(time.Minute):
			t.Fatalf("the host heard no %s within a minute:\n%s", method, host.output())
		}
	}
}
