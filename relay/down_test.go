package relay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestServerDownIsOneServerDown: of two servers, one whose command is
// missing is that server down, not the host's session. Over stdio and over
// HTTP the host initializes, lists the other server's tools (with the
// names it has when both run), calls them, and a call to the down one is
// refused naming it, since when and what to do.
func TestServerDownIsOneServerDown(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			p := newTestProxy(t, "broken", "peer")
			p.cfg.Upstreams[0].Command = []string{t.TempDir() + "/missing-server"}
			var host *mcp.ClientSession
			if transport == "stdio" {
				host = connectHost(t, p, "2025-11-25", nil)
			} else {
				host = connectHTTPHost(t, serveHTTPTest(t, p), "2025-11-25", nil)
			}
			wantServing(t, host)
			_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "broken__echo", Arguments: map[string]any{"text": "x"}})
			if err == nil || !strings.Contains(err.Error(), "upstream broken is down since") || !strings.Contains(err.Error(), "mcpx-fw status") {
				t.Errorf("a call to the down server: %v; want it refused naming it down and where to look", err)
			}
		})
	}
}

// wantServing checks that host lists peer's tools, and only those, and
// that a call to one is answered.
func wantServing(t *testing.T, host *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var names []string
	for tool, err := range host.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list with one server down: %v", err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "peer__echo") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "broken__") }) {
		t.Errorf("tools listed with broken down: %v; want peer's, prefixed, and none of broken's", names)
	}
	res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "peer__echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "still here" {
		t.Errorf("peer__echo with broken down: %+v, %v", res, err)
	}
}

// TestRestartBackoff: a server that stays down is tried after the first
// wait, then after waits doubled up to the longest, and no more once its
// link closes.
func TestRestartBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := RestartOptions{Backoff: time.Second, MaxBackoff: 4 * time.Second}.resolved()
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		var at, nexts []time.Duration
		o.retry(ctx, func(next time.Duration) bool {
			at, nexts = append(at, time.Since(start)), append(nexts, next)
			return len(at) == 5
		})
		want := []time.Duration{time.Second, 3 * time.Second, 7 * time.Second, 11 * time.Second, 15 * time.Second}
		if !slices.Equal(at, want) || !slices.Equal(nexts, []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}) {
			t.Errorf("tries at %v (next waits %v); want at %v", at, nexts, want)
		}
		tries, done := 0, make(chan struct{})
		go func() {
			defer close(done)
			o.retry(ctx, func(time.Duration) bool { tries++; return false })
		}()
		time.Sleep(2 * time.Second)
		cancel()
		<-done
		if tries != 1 {
			t.Errorf("%d tries in the 2s before the link closed; want 1, and none after", tries)
		}
	})
}

// TestServerComesBack: a server down at the host's start comes back once
// its command is restored, and one killed (SIGKILL) while a call to it is
// in flight comes back too: each time the host hears tools/list_changed
// (it is declared), lists and calls it; the call in flight gets a clear
// error naming it; the other server serves throughout; each restart is
// logged once. Over stdio and over HTTP, per host session.
func TestServerComesBack(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			p := newTestProxy(t, "broken", "peer")
			core, logs := observer.New(zapcore.InfoLevel)
			p.log = zap.New(core)
			p.cfg.Restart = RestartOptions{Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}
			dir := t.TempDir()
			script, pidFile := filepath.Join(dir, "broken.sh"), filepath.Join(dir, "pid")
			peerLog := filepath.Join(dir, "peer.log")
			p.cfg.Upstreams[0].Command = []string{"/bin/sh", script}
			changed := make(chan struct{}, 16)
			opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}
			var host *mcp.ClientSession
			if transport == "stdio" {
				host = connectHost(t, p, "2025-11-25", opts)
			} else {
				host = connectHTTPHost(t, serveHTTPTest(t, p), "2025-11-25", opts)
			}
			if c := host.InitializeResult().Capabilities; c.Tools == nil || !c.Tools.ListChanged {
				t.Errorf("with a server down the host was not told tool lists may change: %+v", c)
			}
			wantServing(t, host)
			restore := fmt.Sprintf("#!/bin/sh\necho $$ > %s\nMCPXFW_PEER_LOG=%s exec %s\n", pidFile, peerLog, testUpstream(t))
			if err := os.WriteFile(script, []byte(restore), 0o755); err != nil {
				t.Fatal(err)
			}
			wantBack(t, host, changed)
			wantRestarts(t, logs, 1)

			pid, err := strconv.Atoi(strings.TrimSpace(waitForFile(t, pidFile)))
			if err != nil {
				t.Fatal(err)
			}
			blocked := make(chan error, 1)
			go func() {
				_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "broken__block", Arguments: map[string]any{}})
				blocked <- err
			}()
			// Killed once the upstream holds the call, not while the
			// firewall is still routing it (that call is refused as down).
			waitFor(t, func() bool { return hostCallsOn(p, "broken") == 1 })
			waitForLine(t, peerLog, "block: waiting")
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if err := <-blocked; err == nil || !strings.Contains(err.Error(), "upstream broken is gone: its connection was lost during the call") {
				t.Errorf("the call in flight when its server was killed: %v; want it refused naming the server", err)
			}
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "peer__echo", Arguments: map[string]any{"text": "after"}})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != "after" {
				t.Errorf("peer__echo after broken was killed: %+v, %v", res, err)
			}
			wantBack(t, host, changed)
			wantRestarts(t, logs, 2)
		})
	}
}

// wantBack waits for the host to hear tools/list_changed with broken's
// tools listed, and calls one.
func wantBack(t *testing.T, host *mcp.ClientSession, changed <-chan struct{}) {
	t.Helper()
	for listed := false; !listed; {
		select {
		case <-changed:
		case <-time.After(time.Minute):
			t.Fatal("the host heard no tools/list_changed within a minute")
		}
		for tool, err := range host.Tools(t.Context(), nil) {
			listed = listed || err == nil && tool.Name == "broken__echo"
		}
	}
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "broken__echo", Arguments: map[string]any{"text": "back"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "back" {
		t.Errorf("broken__echo once it came back: %+v, %v", res, err)
	}
}

// wantRestarts checks that n restarts were logged, once each.
func wantRestarts(t *testing.T, logs *observer.ObservedLogs, n int) {
	t.Helper()
	if got := logs.FilterMessage("upstream restarted").Len(); got != n {
		t.Errorf("%d restarts logged, want %d: %v", got, n, logs.FilterMessage("upstream restarted").All())
	}
}

// hostCallsOn counts the host calls running on server's upstream, over every
// host link of p.
func hostCallsOn(p *Proxy, server string) int {
	p.mu.Lock()
	links := p.allLinks()
	p.mu.Unlock()
	n := 0
	for _, l := range links {
		if u := l.byName(server); u != nil {
			u.mu.Lock()
			n += len(u.inFlight)
			u.mu.Unlock()
		}
	}
	return n
}

// TestServerStopsAnswering: a server that stops reading what it is sent
// leaves the firewall's pings unanswered: its session is closed, it is
// down and started again, and the host hears its lists changed, while the
// other server, which answers, is never restarted.
func TestServerStopsAnswering(t *testing.T) {
	p := newTestProxy(t, "deaf", "peer")
	core, logs := observer.New(zapcore.InfoLevel)
	p.log = zap.New(core)
	p.cfg.Restart = RestartOptions{Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, PingInterval: time.Second}
	changed := make(chan struct{}, 16)
	host := connectHost(t, p, "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "deaf__stop_reading", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := strconv.Atoi(res.Content[0].(*mcp.TextContent).Text); err == nil {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}
	for logs.FilterMessage("upstream restarted").Len() == 0 {
		select {
		case <-changed:
		case <-time.After(time.Minute):
			t.Fatal("no tools/list_changed within a minute of the server's going deaf")
		}
	}
	got, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "deaf__echo", Arguments: map[string]any{"text": "hears again"}})
	if err != nil || got.Content[0].(*mcp.TextContent).Text != "hears again" {
		t.Errorf("deaf__echo once restarted: %+v, %v", got, err)
	}
	for _, e := range logs.FilterMessage("upstream restarted").All() {
		if e.ContextMap()["server"] != "deaf" {
			t.Errorf("a server that answers was restarted: %v", e.ContextMap())
		}
	}
}
