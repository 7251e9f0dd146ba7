package relay

import (
	"net/http"
	"os"
	"os/exec"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamTransport reaches cfg's server: over streamable HTTP when it has
// a URL, else by starting its command and speaking over stdio.
func upstreamTransport(cfg Upstream) mcp.Transport {
	if cfg.URL != "" {
		return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: headerClient(cfg.Headers)}
	}
	return &mcp.CommandTransport{Command: command(cfg)}
}

func command(cfg Upstream) *exec.Cmd {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Dir = cfg.Dir
	cmd.Stderr = os.Stderr // the upstream's own logs join ours on stderr
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
	}
	return cmd
}

// headerClient is an HTTP client that adds the configured headers (an
// Authorization, say) to every request the SDK makes: the POSTs (whose
// response streams carry the pushes an upstream makes inside a call), the
// standalone GET stream and the closing DELETE. No overall timeout:
// streams are long-lived, and the relay bounds each call itself.
func headerClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return http.DefaultClient
	}
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: h}}
}

// headerTransport sets headers on a copy of each request, as a
// RoundTripper must not change the one it is given.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}
