package relay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shutdownGrace bounds how long ServeHTTP waits for handlers to return
// after their sessions are closed.
const shutdownGrace = 5 * time.Second

// Handler serves hosts of every protocol revision on one streamable HTTP
// endpoint, all backed by the one host-facing server (SPEC-NOTES §8). The
// SDK serves 2026-07-28 only statelessly, and a stateless session cannot
// send a host any request, so each request is routed on its
// MCP-Protocol-Version header: 2026-07-28 or later to a stateless handler
// (with cancellation propagated, else a host's cancel has no effect), and
// anything else, including no header (every legacy initialize), to a
// stateful one whose sessions receive sampling pushes. Misrouting a legacy
// host would break its sampling; misrouting a 2026 host only downgrades it,
// so when unsure, legacy.
func (p *Proxy) Handler() http.Handler {
	server := func(*http.Request) *mcp.Server { return p.srv }
	r := &eraRouter{
		modern: mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}),
		legacy: mcp.NewStreamableHTTPHandler(server, nil),
	}
	// The root and /mcp, so a host configured with either URL works; every
	// other path is 404.
	mux := http.NewServeMux()
	mux.Handle("/{$}", r)
	mux.Handle("/mcp", r)
	// A web page the operator visits must not drive the firewall: refuse
	// cross-origin browser requests (hosts are not browsers).
	return http.NewCrossOriginProtection().Handler(mux)
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
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

// loopback reports whether host names only this machine: "localhost", an
// address in 127.0.0.0/8, or ::1. An empty host means every interface.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
