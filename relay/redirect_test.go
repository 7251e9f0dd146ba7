package relay

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// headerRecorder is an HTTP server in front of the real test upstream: it
// records the X-Peer-Token of every request it gets and passes the request
// on.
type headerRecorder struct {
	mu     sync.Mutex
	tokens []string
}

func (h *headerRecorder) handler(upstream *url.URL) http.Handler {
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.FlushInterval = -1 // event streams pass at once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.tokens = append(h.tokens, r.Header.Get("X-Peer-Token"))
		h.mu.Unlock()
		proxy.ServeHTTP(w, r)
	})
}

func (h *headerRecorder) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.tokens...)
}

// redirectTo answers every request with a 307 to base + the request's path.
func redirectTo(base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, base+r.URL.Path, http.StatusTemporaryRedirect)
	})
}

// TestHTTPRedirectKeepsCredentials: a configured header never reaches
// another origin. The configured URL answers with a redirect to a second
// server (which would pass everything on to the real upstream): the
// firewall refuses to follow it, logs why naming the server, and the
// second server never sees the secret. A redirect within the configured
// origin is followed, with the header.
func TestHTTPRedirectKeepsCredentials(t *testing.T) {
	const secret = "s3cret"
	up, err := url.Parse(startHTTPUpstream(t, "-require-header", "X-Peer-Token: "+secret))
	if err != nil {
		t.Fatal(err)
	}
	up.Path = ""

	t.Run("to another origin", func(t *testing.T) {
		elsewhere := &headerRecorder{}
		other := httptest.NewServer(elsewhere.handler(up))
		t.Cleanup(other.Close)
		configured := httptest.NewServer(redirectTo(other.URL))
		t.Cleanup(configured.Close)

		p := newTestProxy(t, "peer")
		core, logs := observer.New(zapcore.DebugLevel)
		p.log = zap.New(core)
		p.cfg.Upstreams[0] = defaultOffers(Upstream{Name: "peer", Label: "test peer", URL: configured.URL + "/mcp", Headers: map[string]string{"X-Peer-Token": secret}})
		wantConnectFails(t, p)
		for _, tok := range elsewhere.got() {
			if tok != "" {
				t.Fatalf("the other origin got the configured header %q", tok)
			}
		}
		if !logged(logs, "upstream failed to start", "server peer: redirected to another origin") {
			t.Errorf("no log entry naming the server and the refused redirect: %v", logs.All())
		}
	})

	t.Run("within the configured origin", func(t *testing.T) {
		same := &headerRecorder{}
		mux := http.NewServeMux()
		mux.Handle("/old/mcp", http.RedirectHandler("/mcp", http.StatusPermanentRedirect))
		mux.Handle("/mcp", same.handler(up))
		configured := httptest.NewServer(mux)
		t.Cleanup(configured.Close)

		p := newTestProxy(t, "peer")
		p.cfg.Upstreams[0] = defaultOffers(Upstream{Name: "peer", Label: "test peer", URL: configured.URL + "/old/mcp", Headers: map[string]string{"X-Peer-Token": secret}})
		host := connectHost(t, p, "2025-11-25", nil)
		res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "moved"}})
		if err != nil || res.Content[0].(*mcp.TextContent).Text != "moved" {
			t.Fatalf("echo through a same-origin redirect: %v, %v", res, err)
		}
		if got := same.got(); len(got) == 0 || got[0] != secret {
			t.Errorf("the configured origin got tokens %q; want the header on every request", got)
		}
	})
}

// logged reports whether an entry with message msg has an error field
// holding want.
func logged(logs *observer.ObservedLogs, msg, want string) bool {
	for _, e := range logs.FilterMessage(msg).All() {
		if err, ok := e.ContextMap()["error"].(string); ok && strings.Contains(err, want) {
			return true
		}
	}
	return false
}

// TestRedirectOrigins: what counts as the configured origin: scheme, host
// (in any case) and port (the default one written or not). https to http
// on the same host is another origin.
func TestRedirectOrigins(t *testing.T) {
	const configured = "https://mcp.example.com/mcp"
	tests := []struct {
		to      string
		allowed bool
	}{
		{"https://mcp.example.com/other", true},
		{"https://MCP.example.com:443/mcp/", true},
		{"http://mcp.example.com/mcp", false},
		{"https://mcp.example.com:8443/mcp", false},
		{"https://evil.example.com/mcp", false},
		{"https://mcp.example.com.evil.example/mcp", false},
	}
	check := sameOriginRedirects("web", configured)
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodPost, tt.to, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := check(req, nil); (err == nil) != tt.allowed {
			t.Errorf("redirect %s -> %s: %v; allowed want %v", configured, tt.to, err, tt.allowed)
		}
	}
}

// TestHeadersOnlyToTheirOrigin: the transport adds the configured headers
// to requests for the configured origin and to nothing else, whatever
// sent the request there.
func TestHeadersOnlyToTheirOrigin(t *testing.T) {
	var got []string
	rt := headerRoundTripper("https://mcp.example.com/mcp", map[string]string{"Authorization": "Bearer s3cret"}).(*headerTransport)
	rt.base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.URL.Host+"="+r.Header.Get("Authorization"))
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
	})
	for _, u := range []string{"https://mcp.example.com/mcp", "http://mcp.example.com/mcp", "https://other.example.com/mcp"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"mcp.example.com=Bearer s3cret", "mcp.example.com=", "other.example.com="}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("requests carried %q; want %q", got, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
