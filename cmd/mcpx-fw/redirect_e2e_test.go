package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
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

// TestHTTPUpstreamRedirectKeepsCredentials: a url server's configured
// Authorization header (its value from serve's environment) never leaves
// the configured origin, whatever the server answers. Behind the
// configured URL is the real test upstream, which refuses any request
// without the header; in front of it, a server that redirects. A redirect
// to another origin (another port, or https to http on the same port) is
// refused: the other origin gets no request at all, so never the secret,
// the host cannot use the server, and serve's log names the server and
// the refused redirect. A redirect within the configured origin is
// followed, with the header on every request.
func TestHTTPUpstreamRedirectKeepsCredentials(t *testing.T) {
	const secret = "r3direct-s3cret"
	up, err := url.Parse(startHTTPUpstream(t, "-require-header", "Authorization: Bearer "+secret))
	if err != nil {
		t.Fatal(err)
	}
	up.Path = ""
	tests := []struct {
		name string
		// front starts what the configured URL points at, passing the
		// requests it does not redirect to pass; it returns that URL.
		front    func(t *testing.T, pass http.Handler) string
		followed bool
	}{
		{"to another origin", func(t *testing.T, pass http.Handler) string {
			other := httptest.NewServer(pass)
			t.Cleanup(other.Close)
			configured := httptest.NewServer(redirectTo(other.URL))
			t.Cleanup(configured.Close)
			return configured.URL + "/mcp"
		}, false},
		{"https to http", func(t *testing.T, pass http.Handler) string {
			return downgradingServer(t, pass) + "/mcp"
		}, false},
		{"within the configured origin", func(t *testing.T, pass http.Handler) string {
			mux := http.NewServeMux()
			mux.Handle("/old/mcp", http.RedirectHandler("/mcp", http.StatusPermanentRedirect))
			mux.Handle("/mcp", pass)
			configured := httptest.NewServer(mux)
			t.Cleanup(configured.Close)
			return configured.URL + "/old/mcp"
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := &requestRecorder{}
			configured := tt.front(t, seen.handler(up))
			server := fmt.Sprintf("  peer:\n    url: %s\n    headers: {Authorization: \"Bearer ${MCPXFW_TEST_REDIRECT_TOKEN}\"}\n    max_tokens: 1000\n", configured)
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, server)
			env := append(os.Environ(), "MCPXFW_TEST_REDIRECT_TOKEN="+secret, "SSL_CERT_FILE="+trustedCert(t))
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, Env: env,
				Answer: answerWith(hostAnswer)})
			var res *peer.ToolResult
			if err == nil {
				res, err = h.CallTool(ctx, "echo", map[string]any{"text": "moved"})
				_ = h.Close() // serve exits and flushes its log
			}
			log, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "serve.log"))
			if strings.Contains(string(log), secret) {
				t.Errorf("serve's log holds the secret:\n%s", log)
			}
			got := seen.got()
			if tt.followed {
				if err != nil || res.Text != "moved" {
					t.Fatalf("echo through a same-origin redirect: %+v, %v", res, err)
				}
				if len(got) == 0 {
					t.Fatal("no request reached the configured origin's /mcp")
				}
				for _, r := range got {
					if !strings.Contains(r, "Authorization:[Bearer "+secret+"]") {
						t.Errorf("a request within the configured origin went without the header: %s", r)
					}
				}
				return
			}
			var leaked []string
			for _, r := range got {
				if strings.Contains(r, secret) {
					leaked = append(leaked, r)
				}
			}
			switch {
			case len(leaked) > 0:
				t.Errorf("the other origin got the secret in %d of %d requests, first: %s", len(leaked), len(got), leaked[0])
			case len(got) > 0:
				t.Errorf("the other origin got %d request(s), first: %s", len(got), got[0])
			}
			if err == nil {
				t.Fatalf("the host used a server whose URL redirects to another origin: echo %+v", res)
			}
			// The server is down, not the host's session: its call is
			// refused naming it; the operator's log says why.
			if !strings.Contains(err.Error(), "upstream peer is down since") {
				t.Errorf("the host got %v, want its call refused, naming the server down", err)
			}
			if !strings.Contains(string(log), "server peer: redirected to another origin") {
				t.Errorf("serve's log does not name the server and the refused redirect:\n%s", log)
			}
		})
	}
}

// requestRecorder passes requests on to the real upstream and records
// each one as "URL with headers" (every header, so a credential under any
// name shows).
type requestRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (rr *requestRecorder) handler(upstream *url.URL) http.Handler {
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.FlushInterval = -1 // event streams pass at once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		rr.mu.Lock()
		rr.seen = append(rr.seen, fmt.Sprintf("%s://%s%s with %v", scheme, r.Host, r.URL.Path, r.Header))
		rr.mu.Unlock()
		proxy.ServeHTTP(w, r)
	})
}

func (rr *requestRecorder) got() []string {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]string(nil), rr.seen...)
}

// redirectTo answers every request with a 307 to base + the request's path.
func redirectTo(base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, base+r.URL.Path, http.StatusTemporaryRedirect)
	})
}

// The TLS configuration of httptest's servers and its certificate, which
// serve trusts through SSL_CERT_FILE (Go's own variable, read by crypto/x509
// on Linux and the BSDs): serve needs no setting of its own for the test.
var (
	trustCertOnce sync.Once
	trustCertTLS  *tls.Config
	trustCertPEM  []byte
)

// trustedCert writes the certificate httptest's TLS servers use to a PEM
// file for SSL_CERT_FILE and returns its path.
func trustedCert(t *testing.T) string {
	t.Helper()
	testTLS()
	return writeFile(t, t.TempDir(), "ca.pem", string(trustCertPEM))
}

// testTLS is httptest's server TLS configuration, and its certificate in
// PEM (valid for 127.0.0.1).
func testTLS() *tls.Config {
	trustCertOnce.Do(func() {
		s := httptest.NewTLSServer(http.NotFoundHandler())
		trustCertTLS = s.TLS.Clone()
		trustCertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
		s.Close()
	})
	return trustCertTLS.Clone()
}

// downgradingServer serves TLS and plain HTTP on one loopback port and
// returns its https URL: every https request is redirected to the same
// URL with http, and plain requests go to plain. So the redirect changes
// the scheme and nothing else.
func downgradingServer(t *testing.T, plain http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			plain.ServeHTTP(w, r)
			return
		}
		http.Redirect(w, r, "http://"+addr+r.URL.Path, http.StatusTemporaryRedirect)
	})}
	go func() { _ = hs.Serve(&tlsOrPlain{Listener: ln, cfg: testTLS()}) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "https://" + addr
}

// tlsOrPlain is a listener whose connections are TLS when they start with
// a TLS handshake record (0x16), and plain otherwise. http.Server serves a
// *tls.Conn as https.
type tlsOrPlain struct {
	net.Listener
	cfg *tls.Config
}

func (l *tlsOrPlain) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	pc := &peekedConn{Conn: c, r: br}
	if err == nil && first[0] == 0x16 {
		return tls.Server(pc, l.cfg), nil
	}
	return pc, nil
}

// peekedConn reads first what was peeked of it.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }
