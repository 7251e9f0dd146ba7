package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// sharedReplicas starts n `serve --http` replicas sharing one state dir
// (one SQLite review store) and one seal.key_file, as replicas behind one
// address are configured.
func sharedReplicas(t *testing.T, n int) []*httpServe {
	t.Helper()
	shared := t.TempDir()
	keyFile := writeFile(t, filepath.Join(shared, "keys"), "seal.key", "0123456789abcdef0123456789abcdef")
	stateDir := filepath.Join(shared, "state")
	var out []*httpServe
	for range n {
		cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(b), "\n") // testConfig's first line is its own state_dir
		body := fmt.Sprintf("state_dir: %s\n%sseal:\n  key_file: %s\n", stateDir, rest, keyFile)
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, startHTTPServe(t, cfg))
	}
	return out
}

// splitFront is a balancer in front of two replicas that sends a host's
// tools/call to the first and every retry of one (it carries a
// requestState) to the second: the worst a balancer without affinity can
// do to a 2026-07-28 host. Everything else alternates. It records where
// each call went.
type splitFront struct {
	proxies []*httputil.ReverseProxy
	mu      sync.Mutex
	next    int
	routed  []string // "<replica> <method> <first|retry>"
}

func newSplitFront(t *testing.T, replicas []*httpServe) (*httptest.Server, *splitFront) {
	f := &splitFront{}
	for _, r := range replicas {
		u, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		f.proxies = append(f.proxies, &httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.URL.Path = u.Path
		}})
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("front routed: %q", f.routes())
		}
	})
	return srv, f
}

func (f *splitFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
		Params struct {
			RequestState string `json:"requestState"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	f.mu.Lock()
	i := f.next % len(f.proxies)
	f.next++
	what := "first"
	if msg.Method == "tools/call" {
		i = 0
		if msg.Params.RequestState != "" {
			i, what = 1, "retry"
		}
	}
	f.routed = append(f.routed, fmt.Sprintf("%d %s %s", i, msg.Method, what))
	f.mu.Unlock()
	f.proxies[i].ServeHTTP(w, r)
}

func (f *splitFront) routes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.routed...)
}

// TestContinuationAcrossServeReplicas: two `serve --http` replicas sharing
// one store and one seal.key_file, behind a balancer that sends a
// 2026-07-28 host's call to one and its retry to the other: the call
// completes with the host's answer.
func TestContinuationAcrossServeReplicas(t *testing.T) {
	front, f := newSplitFront(t, sharedReplicas(t, 2))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	h, err := peer.ConnectHTTP(ctx, front.URL+"/mcp", peer.HostOptions{Answer: answerWith(hostAnswer), ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.CallTool(ctx, "sample_input", map[string]any{"params": json.RawMessage(plainRequest)})
	if err != nil || !strings.Contains(res.Text, "the host's answer") {
		t.Fatalf("call resumed on the other replica: %+v, %v", res, err)
	}
	routed := strings.Join(f.routes(), "\n")
	if !strings.Contains(routed, "0 tools/call first") || !strings.Contains(routed, "1 tools/call retry") {
		t.Fatalf("the front did not split the call from its retry:\n%s", routed)
	}
}

// TestUnknownSessionIs404: a legacy (2025-11-25) session lives in the
// replica that created it; its Mcp-Session-Id sent to another replica is
// answered 404, as the spec asks, so the host starts a new session,
// while the replica that holds it answers.
func TestUnknownSessionIs404(t *testing.T) {
	replicas := sharedReplicas(t, 2)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	resp := postMCP(t, replicas[0].url, "", init)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize on the first replica: %s, session id %q", resp.Status, session)
	}
	if got := postMCP(t, replicas[0].url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode; got != http.StatusAccepted {
		t.Fatalf("notifications/initialized on the first replica answered %d", got)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	for _, tc := range []struct {
		name string
		url  string
		want int
	}{
		{"the other replica", replicas[1].url, http.StatusNotFound},
		{"the replica holding the session", replicas[0].url, http.StatusOK},
	} {
		if got := postMCP(t, tc.url, session, list).StatusCode; got != tc.want {
			t.Errorf("%s: tools/list with the session id answered %d, want %d", tc.name, got, tc.want)
		}
	}
}

// postMCP posts one JSON-RPC message to a streamable HTTP endpoint as a
// 2025-11-25 host does, and returns the response with its body read.
func postMCP(t *testing.T, endpoint, session, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}
