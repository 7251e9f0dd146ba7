package relay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
)

// noStandalone is a host's HTTP client that never opens the standalone
// stream itself (its GET is answered 405, as by a server without one), so
// a test can open it when it chooses.
type noStandalone struct{}

func (noStandalone) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		return &http.Response{StatusCode: http.StatusMethodNotAllowed, Body: http.NoBody, Request: r, Header: http.Header{}}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestPushWaitsForStandaloneStream: a push with no host call to ride on
// (npm server-everything's roots/list as soon as it is initialized), made
// before the HTTP host has opened its standalone stream, is not refused:
// it waits, and reaches the host on the stream once the host opens it.
// The order is driven: the push is tried first, then the stream opened.
func TestPushWaitsForStandaloneStream(t *testing.T) {
	p := newTestProxy(t, "alpha")
	url := serveHTTPTest(t, p)
	host := connectStreamless(t, url)
	l, u := onlyLink(t, p)

	type outcome struct {
		res mcp.InputResponse
		err error
	}
	pushed := make(chan outcome, 1)
	go func() {
		res, err := p.source(u, l.host, engine.Origin{}).Asker.Ask(fromUpstream(t.Context(), u), pipeline.Roots, &mcp.ListRootsParams{})
		pushed <- outcome{res, err}
	}()
	for !waitsForStream(p, host.ID()) {
		select {
		case o := <-pushed:
			t.Fatalf("the push ended before the host opened its standalone stream: %v, %v", o.res, o.err)
		default:
			runtime.Gosched()
		}
	}

	events := openStandalone(t, url, host.ID())
	req := nextRequest(t, events)
	if req.Method != "roots/list" {
		t.Fatalf("the host's stream carried %s, want roots/list", req.Method)
	}
	answerHost(t, url, host.ID(), req.ID, `{"roots":[{"uri":"file:///srv/a"}]}`)
	o := <-pushed
	if o.err != nil {
		t.Fatalf("push: %v", o.err)
	}
	if roots := o.res.(*mcp.ListRootsResult).Roots; len(roots) != 1 || roots[0].URI != "file:///srv/a" {
		t.Errorf("roots %v, want the host's one", roots)
	}
}

// TestPushWithoutStandaloneStreamEnds: a host that never opens its
// standalone stream does not hold a push past the bound: it fails as the
// SDK refused it.
func TestPushWithoutStandaloneStreamEnds(t *testing.T) {
	p := newTestProxy(t, "alpha")
	p.streams.bound = 50 * time.Millisecond
	url := serveHTTPTest(t, p)
	host := connectStreamless(t, url)
	l, u := onlyLink(t, p)
	_, err := p.source(u, l.host, engine.Origin{}).Asker.Ask(fromUpstream(t.Context(), u), pipeline.Roots, &mcp.ListRootsParams{})
	if !undelivered(err) {
		t.Errorf("push to a host with no stream: %v, want the transport's refusal", err)
	}
	if waitsForStream(p, host.ID()) {
		t.Error("a push that gave up is still waited for")
	}
}

// connectStreamless connects a 2025-11-25 host that opens no standalone
// stream (noStandalone) to url, and has its upstreams started.
func connectStreamless(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	host, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: noStandalone{}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Close() })
	if _, err := host.ListTools(t.Context(), nil); err != nil { // starts the upstream
		t.Fatal(err)
	}
	return host
}

// onlyLink is p's one host link and its one upstream.
func onlyLink(t *testing.T, p *Proxy) (*link, *upstream) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		if ups := l.upstreamList(); len(ups) == 1 {
			return l, ups[0]
		}
	}
	t.Fatal("no host link with one upstream")
	return nil, nil
}

// waitsForStream reports whether a push waits for session id's stream.
func waitsForStream(p *Proxy, id string) bool {
	p.streams.mu.Lock()
	defer p.streams.mu.Unlock()
	return p.streams.waiting[id] != nil
}

// openStandalone opens session id's standalone stream, as a host's GET,
// and returns its events' lines.
func openStandalone(t *testing.T, url, id string) *bufio.Scanner {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Mcp-Session-Id", id)
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", resp.Status)
	}
	return bufio.NewScanner(resp.Body)
}

// wireRequest is a request the host read off its stream.
type wireRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func nextRequest(t *testing.T, events *bufio.Scanner) wireRequest {
	t.Helper()
	for events.Scan() {
		if data, ok := strings.CutPrefix(events.Text(), "data: "); ok {
			var req wireRequest
			if err := json.Unmarshal([]byte(data), &req); err != nil {
				t.Fatal(err)
			}
			return req
		}
	}
	t.Fatalf("the stream ended: %v", events.Err())
	return wireRequest{}
}

// answerHost posts the host's answer to request id on session.
func answerHost(t *testing.T, url, session string, id json.RawMessage, result string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Session-Id", session)
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST answer: %s", resp.Status)
	}
}
