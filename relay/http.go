package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shutdownGrace bounds how long ServeHTTP waits for handlers to return
// after their sessions are closed.
const shutdownGrace = 5 * time.Second

// readHeaderTimeout bounds reading a request's headers.
const readHeaderTimeout = 10 * time.Second

// HTTPOptions bound what hosts served over HTTP may hold. Zero fields take
// DefaultHTTPOptions.
type HTTPOptions struct {
	// SessionTimeout closes a legacy host session no request has come on
	// for this long, and stops its upstreams: a host that went away without
	// ending its session must not hold them forever. A request in progress
	// (a tool call, a push to the host) keeps the session alive; an open
	// event stream alone does not, so hosts that idle longer should ping.
	SessionTimeout time.Duration `mapstructure:"session_timeout"`
	// MaxSessions caps the host sessions open at once; an initialize past
	// it is refused (-32603).
	MaxSessions int `mapstructure:"max_sessions"`
	// ReadTimeout bounds reading each request's body, once its headers
	// are read; it stops counting once the body is read, so a long call or
	// event stream is not cut.
	ReadTimeout time.Duration `mapstructure:"read_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout time.Duration `mapstructure:"idle_timeout"`
	// MaxHeaderBytes caps a request's headers.
	MaxHeaderBytes int `mapstructure:"max_header_bytes"`
	// MaxBodyBytes caps a request's body (413 past it).
	MaxBodyBytes int64 `mapstructure:"max_body_bytes"`
}

// DefaultHTTPOptions are the HTTP limits unless configured. The body cap
// is twice limits.max_bytes (4 MiB): a host's answer carries a completion
// of up to that size, within a JSON-RPC envelope and its escapes.
func DefaultHTTPOptions() HTTPOptions {
	return HTTPOptions{SessionTimeout: 30 * time.Minute, MaxSessions: 32, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, MaxBodyBytes: 8 << 20}
}

func (o HTTPOptions) resolved() HTTPOptions {
	d := DefaultHTTPOptions()
	o.SessionTimeout = orDefault(o.SessionTimeout, d.SessionTimeout)
	o.MaxSessions = orDefault(o.MaxSessions, d.MaxSessions)
	o.ReadTimeout = orDefault(o.ReadTimeout, d.ReadTimeout)
	o.IdleTimeout = orDefault(o.IdleTimeout, d.IdleTimeout)
	o.MaxHeaderBytes = orDefault(o.MaxHeaderBytes, d.MaxHeaderBytes)
	o.MaxBodyBytes = orDefault(o.MaxBodyBytes, d.MaxBodyBytes)
	return o
}

// Handler serves hosts of every protocol revision on one streamable HTTP
// endpoint, all backed by the one host-facing server (the Go SDK v1.8.0 serves
// both eras on one address this way). The
// SDK serves 2026-07-28 only statelessly, and a stateless session cannot
// send a host any request, so each request is routed on its
// MCP-Protocol-Version header: 2026-07-28 or later to a stateless handler
// (with cancellation propagated, else a host's cancel has no effect), and
// anything else, including no header (every legacy initialize), to a
// stateful one whose sessions receive sampling pushes. Misrouting a legacy
// host would break its sampling; misrouting a 2026 host only downgrades it,
// so when unsure, legacy.
//
// Host sessions served here start their upstreams on first use, not at
// initialize (see attachHost); idle ones are closed after
// HTTPOptions.SessionTimeout. Each request's body must be read within
// HTTPOptions.ReadTimeout and is capped at HTTPOptions.MaxBodyBytes.
func (p *Proxy) Handler() http.Handler {
	p.lazy.Store(true)
	o := p.cfg.HTTP
	server := func(*http.Request) *mcp.Server { return p.srv }
	r := &eraRouter{
		modern: mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true,
			MaxRequestBodyBytes: o.MaxBodyBytes}),
		legacy: p.streams.watch(mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout,
			MaxRequestBodyBytes: o.MaxBodyBytes})),
	}
	// The root and /mcp, so a host configured with either URL works; every
	// other path is 404.
	mux := http.NewServeMux()
	p.answers = &recentJSON{}
	events := p.noteHostAnswers(oneLineEvents(r, p.log))
	mux.Handle("/{$}", events)
	mux.Handle("/mcp", events)
	// A web page the operator visits must not drive the firewall: refuse
	// cross-origin browser requests (hosts are not browsers).
	return bodyDeadline(http.NewCrossOriginProtection().Handler(mux), o.ReadTimeout)
}

// bodyDeadline gives each request timeout to send its body. The deadline
// is on the connection, set per request and cleared once the body is read:
// http.Server.ReadTimeout would do the first but not the second, and the
// server's read for a closed connection, which runs while a long call or
// event stream is answered, would then end that call's context.
func bodyDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the read deadline once its body has been read to
// the end. A body that failed keeps it: the server reads what is left of
// it before answering, and that read must be cut too.
type deadlineBody struct {
	io.ReadCloser
	clear func()
	once  sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.clear)
	}
	return n, err
}

// eraRouter sends each request to the handler of its protocol era.
type eraRouter struct {
	modern, legacy http.Handler
}

func (e *eraRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isModern(r.Header.Get("MCP-Protocol-Version")) {
		e.modern.ServeHTTP(w, r)
		return
	}
	e.legacy.ServeHTTP(w, r)
}

// ServeHTTP serves hosts on ln until ctx ends, then shuts down: it stops
// accepting, closes every host session (so long-lived event streams end,
// and requests still waiting, on a review say, stop as they do over
// stdio), waits for handlers to return, and closes every upstream.
func (p *Proxy) ServeHTTP(ctx context.Context, ln net.Listener) error {
	defer p.Close()
	var active atomic.Int64
	h := p.Handler()
	o := p.cfg.HTTP
	srv := &http.Server{ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: o.IdleTimeout, MaxHeaderBytes: o.MaxHeaderBytes,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			active.Add(1)
			defer active.Add(-1)
			h.ServeHTTP(w, r)
		})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	return p.shutdown(srv, &active)
}

// shutdown waits for running handlers, not for idle connections: a client
// may hold a connection it never sent a request on, which Shutdown would
// wait out.
func (p *Proxy) shutdown(srv *http.Server, active *atomic.Int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	go func() { _ = srv.Shutdown(ctx) }() // closes the listener at once
	p.quiesce()                           // answers what upstreams wait for, while their host calls still run
	for ss := range p.srv.Sessions() {
		_ = ss.Close()
	}
	for active.Load() > 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	n := active.Load()
	_ = srv.Close()
	if n > 0 {
		return fmt.Errorf("http shutdown: %d request(s) still running after %s", n, shutdownGrace)
	}
	return nil
}

// Listen opens addr for ServeHTTP. An address other hosts could reach is
// refused unless allowRemote: the firewall holds the upstreams'
// credentials and asks the host's model on their behalf, and the protocol
// has no authentication of its own here.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: want HOST:PORT, such as 127.0.0.1:8080", addr)
	}
	if !allowRemote && !loopback(host) {
		return nil, fmt.Errorf("--http %s: not a loopback address, so other machines could reach the firewall; "+
			"use 127.0.0.1 or localhost, or set http.allow_remote: true in the config", addr)
	}
	return net.Listen("tcp", addr)
}

// Loopback reports whether host names only this machine (see loopback):
// the rule every listener of the firewall applies unless its config
// allows remote clients.
func Loopback(host string) bool { return loopback(host) }

// loopback reports whether host names only this machine: "localhost", an
// address in 127.0.0.0/8, or ::1. An empty host means every interface.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
