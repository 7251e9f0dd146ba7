package relay

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// upstreamTransportFor reaches u's server, screening its sampling on the
// bytes it sends. A command upstream speaks over stdio, and its connection
// is wrapped (guardedTransport); its stderr is logged, line by line, never
// passed through (stderrTransport). A URL upstream gets the SDK's own
// streamable HTTP connection, unwrapped: the SDK opens the standalone GET
// stream and sends MCP-Protocol-Version only through hooks a wrapper would
// hide, so there the screening happens in its HTTP client instead
// (screeningTransport).
func (p *Proxy) upstreamTransportFor(u *upstream) mcp.Transport {
	g := p.guardFor(u)
	if u.cfg.URL == "" {
		cmd := command(u.cfg, p.cfg.Hide, p.cfg.ReadOnly)
		u.framePath = newFrameCalls(u, g)
		guarded := &guardedTransport{Transport: &mcp.CommandTransport{Command: cmd}, guard: g, framePath: u.framePath}
		return &stderrTransport{Transport: guarded, cmd: cmd, server: u.cfg.Name, log: p.log}
	}
	rt := &screeningTransport{base: headerRoundTripper(u.cfg.URL, u.cfg.Headers), server: u.cfg.Name, log: u.log, guard: g}
	client := &http.Client{Transport: rt, CheckRedirect: sameOriginRedirects(u.cfg.Name, u.cfg.URL)}
	return &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: client, MaxEventSize: rawjson.MaxFrame}
}

// command is how cfg's server is started: with its own environment, the
// allow-listed part of the firewall's plus its configured variables
// (sandbox.Environ), never the firewall's whole one; and, when it is
// isolated, through the sandbox's launcher with hide out of its reach,
// readOnly out of its power to change, and its own temporary folder as
// TMPDIR.
func command(cfg Upstream, hide, readOnly []string) *exec.Cmd {
	if cfg.Isolated {
		env := sandbox.IsolatedEnviron(os.Environ(), cfg.Env)
		return sandbox.Command(sandbox.Spec{Args: cfg.Command, Env: env, Dir: cfg.Dir, Hide: hide, ReadOnly: readOnly})
	}
	env := sandbox.Environ(os.Environ(), cfg.Env)
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Dir = cfg.Dir
	cmd.Env = env
	return cmd
}

// headerRoundTripper adds the configured headers (an Authorization, say)
// to every request the SDK makes to the configured URL's origin: the POSTs
// (whose response streams carry the pushes an upstream makes inside a
// call), the standalone GET stream and the closing DELETE, and to the
// answers screeningTransport sends itself. The client it serves has no
// overall timeout: streams are long-lived, and the relay bounds each call
// itself.
func headerRoundTripper(endpoint string, headers map[string]string) http.RoundTripper {
	if len(headers) == 0 {
		return http.DefaultTransport
	}
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	return &headerTransport{base: http.DefaultTransport, headers: h, origin: endpointOrigin(endpoint)}
}

// headerTransport sets headers on a copy of each request to origin, as a
// RoundTripper must not change the one it is given. A request anywhere
// else goes without them: credentials are for the server configured, and
// the client refuses to be redirected elsewhere anyway
// (sameOriginRedirects); this holds even if something asked it to.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
	origin  string
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if originOf(r.URL) != t.origin {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// errOtherOrigin is a redirect away from a server's configured origin.
var errOtherOrigin = errors.New("redirected to another origin")

// sameOriginRedirects lets the HTTP client follow a redirect only within
// the configured URL's origin (scheme, host and port: https to http is
// another origin). A server that sends its client elsewhere is refused,
// not followed without its headers: the configured URL is who the server
// is, for the operator and for the credentials given to it, and a hop to
// another origin would be another server, with neither. A server that has
// moved is configured again.
func sameOriginRedirects(server, endpoint string) func(*http.Request, []*http.Request) error {
	origin := endpointOrigin(endpoint)
	return func(req *http.Request, via []*http.Request) error {
		if originOf(req.URL) != origin {
			return fmt.Errorf("server %s: %w; configured headers go to %s only", server, errOtherOrigin, origin)
		}
		if len(via) >= 10 {
			return fmt.Errorf("server %s: stopped after 10 redirects", server)
		}
		return nil
	}
}

// endpointOrigin is the origin of a configured URL (checked at start-up);
// one that does not parse has none, and no request matches it.
func endpointOrigin(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "none"
	}
	return originOf(u)
}

// originOf is a URL's origin as scheme://host:port, lower case, with the
// scheme's default port made explicit.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
