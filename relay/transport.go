package relay

import (
	"net/http"
	"os"
	"os/exec"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamTransportFor reaches u's server, screening its sampling on the
// bytes it sends. A command upstream speaks over stdio, and its connection
// is wrapped (guardedTransport). A URL upstream gets the SDK's own
// streamable HTTP connection, unwrapped: the SDK opens the standalone GET
// stream and sends MCP-Protocol-Version only through hooks a wrapper would
// hide, so there the screening happens in its HTTP client instead
// (screeningTransport).
func (p *Proxy) upstreamTransportFor(u *upstream) mcp.Transport {
	g := guard{screen: p.screenFor(u), inputs: p.screenInputsFor(u)}
	if u.cfg.URL == "" {
		return &guardedTransport{Transport: &mcp.CommandTransport{Command: command(u.cfg)}, guard: g}
	}
	rt := &screeningTransport{base: headerRoundTripper(u.cfg.Headers), guard: g}
	return &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: &http.Client{Transport: rt}}
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

// headerRoundTripper adds the configured headers (an Authorization, say)
// to every request the SDK makes: the POSTs (whose response streams carry
// the pushes an upstream makes inside a call), the standalone GET stream
// and the closing DELETE, and to the answers screeningTransport sends
// itself. The client it serves has no overall timeout: streams are
// long-lived, and the relay bounds each call itself.
func headerRoundTripper(headers map[string]string) http.RoundTripper {
	if len(headers) == 0 {
		return http.DefaultTransport
	}
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	return &headerTransport{base: http.DefaultTransport, headers: h}
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
