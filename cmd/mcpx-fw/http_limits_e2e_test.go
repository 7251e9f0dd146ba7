package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// descendants lists the processes below pid (children, theirs, and so
// on): an upstream may run under a launcher serve starts.
func descendants(t *testing.T, pid int) []int {
	t.Helper()
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		stat, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		_, rest, ok := bytes.Cut(stat, []byte(") "))
		f := strings.Fields(string(rest))
		if !ok || len(f) < 2 || f[0] == "Z" {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		ppid, _ := strconv.Atoi(f[1])
		parent[child] = ppid
	}
	var out []int
	for child := range parent {
		for p := parent[child]; p != 0; p = parent[p] {
			if p == pid {
				out = append(out, child)
				break
			}
			if _, known := parent[p]; !known {
				break
			}
		}
	}
	return out
}

// rawInitialize sends one initialize, and nothing else, as a 2025-11-25
// host would open a session; it returns the HTTP status, the session id
// and the JSON-RPC message of the answer.
func rawInitialize(t *testing.T, endpoint string) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"bare","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	msg := string(raw)
	for line := range strings.Lines(msg) {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			msg = strings.TrimSpace(data)
		}
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msg
}

// TestHTTPBareInitializeStartsNothing: over HTTP, initializes alone start
// no upstream process; a session's first request that needs its upstreams
// starts them, and the capabilities advertised say what they offer.
func TestHTTPBareInitializeStartsNothing(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("alpha", 1000)+peerServer("beta", 1000))
	s := startHTTPServe(t, cfg)
	pid := s.cmd.Process.Pid
	for i := range 6 {
		code, id, msg := rawInitialize(t, s.url)
		if code != http.StatusOK || id == "" || !strings.Contains(msg, `"tools"`) {
			t.Fatalf("initialize %d: %d, session %q: %s", i, code, id, msg)
		}
	}
	if got := descendants(t, pid); len(got) != 0 {
		t.Fatalf("after 6 bare initializes serve runs %d processes (%v); want none", len(got), got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	h, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{Answer: answerWith(hostAnswer)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got := descendants(t, pid); len(got) != 0 {
		t.Fatalf("after a host's initialize serve runs %d processes; want none yet", len(got))
	}
	names, err := h.ToolNames(ctx)
	if err != nil || len(names) == 0 {
		t.Fatalf("tools/list: %v, %v", names, err)
	}
	if got := descendants(t, pid); len(got) < 2 {
		t.Errorf("after a tools/list serve runs %d processes; want both upstreams", len(got))
	}
	// Started once, each server's capabilities are known to the next
	// initialize, which still starts nothing.
	_, _, msg := rawInitialize(t, s.url)
	var init struct {
		Result struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(msg), &init); err != nil {
		t.Fatal(err)
	}
	if _, ok := init.Result.Capabilities["completions"]; ok {
		t.Errorf("a later initialize advertises %s; the upstreams offer no completions", msg)
	}
}

// TestHTTPIdleSessionClosed: a host session no request comes on for
// http.session_timeout is closed and its upstreams stopped, though the
// host keeps its event stream open and never ends the session.
func TestHTTPIdleSessionClosed(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	appendConfig(t, cfg, "http:\n  session_timeout: 1s\n")
	s := startHTTPServe(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	h, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{Answer: answerWith(hostAnswer)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	if len(descendants(t, s.cmd.Process.Pid)) == 0 {
		t.Fatal("no upstream process after a tool call")
	}
	waitFor(t, "the idle session's upstream to stop", func() bool { return len(descendants(t, s.cmd.Process.Pid)) == 0 })
	if _, err := h.CallTool(ctx, "echo", map[string]any{"text": "again"}); err == nil {
		t.Error("a call on the closed session succeeded")
	}
}

// TestHTTPSessionCap: past http.max_sessions open host sessions, an
// initialize is refused with a JSON-RPC error naming the key; once one
// session ends, a new one is taken.
func TestHTTPSessionCap(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	appendConfig(t, cfg, "http:\n  max_sessions: 2\n")
	s := startHTTPServe(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var hosts []*peer.HTTPHost
	for range 2 {
		h, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		hosts = append(hosts, h)
	}
	code, _, msg := rawInitialize(t, s.url)
	if code != http.StatusOK || !strings.Contains(msg, `"code":-32603`) || !strings.Contains(msg, "http.max_sessions (2) reached") {
		t.Fatalf("a third initialize: %d %s; want -32603 naming http.max_sessions (2)", code, msg)
	}
	if _, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{}); err == nil || !strings.Contains(err.Error(), "http.max_sessions") {
		t.Fatalf("a third host: %v; want refused naming http.max_sessions", err)
	}
	_ = hosts[0].Close()
	waitFor(t, "a session to be taken after one ended", func() bool {
		code, _, msg := rawInitialize(t, s.url)
		return code == http.StatusOK && !strings.Contains(msg, "error")
	})
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "serve.log")); !bytes.Contains(b, []byte(`"limit":"http.max_sessions"`)) {
		t.Errorf("the refused session was not logged with its limit: %s", b)
	}
}

// TestHTTPReadTimeout: a request whose body does not arrive within
// http.read_timeout is cut, while a call that takes longer than that to
// answer, on a stream, is not.
func TestHTTPReadTimeout(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	const readTimeout = time.Second
	appendConfig(t, cfg, fmt.Sprintf("http:\n  read_timeout: %s\n", readTimeout))
	s := startHTTPServe(t, cfg)

	t.Run("slow body is cut", func(t *testing.T) {
		u, err := url.Parse(s.url)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", u.Path, u.Host)
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		took := time.Since(start)
		switch {
		case err == nil:
			resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Errorf("a body that never arrived got %s", resp.Status)
			}
		case isTimeout(err):
			t.Fatalf("serve still waited for the body after %v", took)
		}
		if took > 10*readTimeout {
			t.Errorf("the slow body was cut after %v; want about %v", took, readTimeout)
		}
	})

	// A 2026-07-28 host's call ends when its request's context does, so a
	// read deadline left on its connection would cut it.
	for _, c := range []struct{ era, tool string }{{"2025-11-25", "sample"}, {"2026-07-28", "sample_input"}} {
		era := c.era
		t.Run("long call is not cut/"+era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			h, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{Answer: answerWith(hostAnswer), ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			done := make(chan error, 1)
			go func() {
				res, err := h.CallTool(ctx, c.tool, map[string]any{"params": json.RawMessage(secretRequest)})
				if err == nil && !strings.Contains(res.Text, "the host's answer") {
					err = fmt.Errorf("got %s", res.Text)
				}
				done <- err
			}()
			id := waitPending(t, cfg)
			time.Sleep(3 * readTimeout) // the call, its body long read, outlasts the read timeout
			if res := runCLI(t, "review", "approve", id, "--config", cfg); res.code != 0 {
				t.Fatalf("approve: %s", res.stderr)
			}
			if err := <-done; err != nil {
				t.Errorf("a call answered after %v: %v", 3*readTimeout, err)
			}
		})
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
