package relay

import (
	"context"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernEra is the first revision without initialize, in which sampling
// travels only inside input_required results.
const modernEra = "2026-07-28"

func isModern(era string) bool { return era >= modernEra }

// Revisions lists the protocol revisions the firewall speaks, to hosts and
// to upstreams, newest first.
func Revisions() []string { return mcp.SupportedProtocolVersions() }

// initializeMiddleware connects the upstreams for a host: at initialize for
// hosts up to 2025-11-25, so each upstream session speaks the host's
// revision and is offered sampling only if the host can answer it (the
// firewall follows the host's revision), and at server/discover for
// 2026-07-28 hosts. Either way the answer advertises what the upstreams
// offer. The SDK handles initialize synchronously, so no other request of
// that host can arrive first.
func (p *Proxy) initializeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			return p.initialize(ctx, next, method, req)
		case "server/discover":
			return p.discover(ctx, next, method, req)
		}
		return next(ctx, method, req)
	}
}

func (p *Proxy) initialize(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	if werr := p.openSession(); werr != nil {
		return nil, werr
	}
	l, res, err := p.initializeHost(ctx, next, method, req)
	if err != nil {
		p.closeSession()
		return res, err
	}
	res.Capabilities = p.advertised(l)
	return res, nil
}

// initializeHost answers initialize and links the host's session.
func (p *Proxy) initializeHost(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (*link, *mcp.InitializeResult, error) {
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, nil, err
	}
	init, ok := res.(*mcp.InitializeResult)
	ir, ok2 := req.(*mcp.ServerRequest[*mcp.InitializeParams])
	if !ok || !ok2 {
		return nil, nil, refusal.Internal("unexpected initialize types")
	}
	l, err := p.attachHost(ctx, hostView{session: ir.Session, era: init.ProtocolVersion, caps: ir.Params.Capabilities})
	if err != nil {
		return nil, nil, err
	}
	return l, init, nil
}

// openSession counts a host session that is initializing, or refuses it
// past http.max_sessions: each may start every upstream. closeSession
// gives the place back when it fails or ends.
func (p *Proxy) openSession() *jsonrpc.Error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions >= p.cfg.HTTP.MaxSessions {
		p.admit.RefuseSession("http.max_sessions", int64(p.cfg.HTTP.MaxSessions))
		return refusal.SessionLimit(p.cfg.HTTP.MaxSessions)
	}
	p.sessions++
	return nil
}

func (p *Proxy) closeSession() {
	p.mu.Lock()
	p.sessions--
	p.mu.Unlock()
}

func (p *Proxy) discover(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	dr, ok := res.(*mcp.DiscoverResult)
	if !ok {
		return nil, refusal.Internal("unexpected discover result")
	}
	l, err := p.modernLink(ctx)
	if err != nil {
		return nil, err
	}
	dr.Capabilities = l.mergedCapabilities()
	return dr, nil
}

// attachHost links a host session that initialized and keeps the link
// until that session ends. Over stdio its upstreams start now; over HTTP,
// where any number of hosts may initialize, on the session's first
// request that needs them (see started).
func (p *Proxy) attachHost(ctx context.Context, h hostView) (*link, error) {
	l := newLink(h)
	if !p.lazy.Load() {
		if err := p.started(ctx, l); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close()
		return nil, refusal.ShuttingDown()
	}
	p.links[h.session] = l
	p.mu.Unlock()
	go func() {
		_ = h.session.Wait()
		p.detach(h.session)
	}()
	return l, nil
}

// started starts l's upstreams unless they are running: all of them at
// once, since names are prefixed by whether there are several. A failed
// start is not kept, so the next request tries again.
func (p *Proxy) started(ctx context.Context, l *link) error {
	if l.started.Load() {
		return nil // every request after the first
	}
	l.start.Lock()
	defer l.start.Unlock()
	if l.started.Load() {
		return nil
	}
	if err := p.connectAll(ctx, l, l.host.era); err != nil {
		return err
	}
	l.started.Store(true)
	return nil
}

func (p *Proxy) detach(ss *mcp.ServerSession) {
	p.mu.Lock()
	l := p.links[ss]
	delete(p.links, ss)
	if l != nil {
		p.sessions--
		p.detaching.Add(1)
	}
	p.mu.Unlock()
	if l != nil {
		l.close()
		p.detaching.Done()
	}
}

// modernLink is the link every 2026-07-28 request shares, connected on
// first use. A failed start is not kept, so the next request tries again.
func (p *Proxy) modernLink(ctx context.Context) (*link, error) {
	p.starting.Lock()
	defer p.starting.Unlock()
	p.mu.Lock()
	l, closed := p.modern, p.closed
	p.mu.Unlock()
	if closed {
		return nil, refusal.ShuttingDown()
	}
	if l != nil {
		return l, nil
	}
	l = newLink(hostView{era: modernEra})
	l.shared = true
	if err := p.started(ctx, l); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		l.close()
		return nil, refusal.ShuttingDown()
	}
	p.modern = l
	return l, nil
}

// connectAll starts every configured upstream for l, and remembers what
// each offered (see advertised); one that fails to start is down on l
// (down.go), the others serve. Upstreams started for a link that closed
// meanwhile (its host left, the firewall is stopping) are closed again.
func (p *Proxy) connectAll(ctx context.Context, l *link, era string) error {
	ups := make([]*upstream, 0, len(p.cfg.Upstreams))
	closeAll := func() {
		for _, started := range ups {
			started.close()
		}
	}
	for _, cfg := range p.cfg.Upstreams {
		u, err := p.connect(l, cfg, era)
		if err != nil {
			ups = append(ups, p.downUpstream(l, cfg, err))
			continue
		}
		ups = append(ups, u)
		p.known.remember(cfg, era, l, u.session.InitializeResult().Capabilities)
	}
	l.mu.Lock()
	if l.gone.Err() != nil {
		l.mu.Unlock()
		closeAll()
		return refusal.ShuttingDown()
	}
	l.upstreams, l.prefixAll = ups, p.cfg.PrefixNames || len(p.cfg.Upstreams) > 1
	l.mu.Unlock()
	p.restartDown(l)
	return nil
}

// linkFor finds the link a host request belongs to: the modern link for a
// 2026-07-28 request, else the link its session made at initialize.
func (p *Proxy) linkFor(ctx context.Context, req mcp.Request) (*link, hostView, error) {
	sr, ok := req.(interface {
		ProtocolVersion() string
		ClientCapabilities() *mcp.ClientCapabilities
	})
	if ok && isModern(sr.ProtocolVersion()) {
		l, err := p.modernLink(ctx)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		return l, hostView{session: ss, era: sr.ProtocolVersion(), caps: orEmpty(sr.ClientCapabilities())}, err
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	p.mu.Lock()
	l := p.links[ss]
	p.mu.Unlock()
	if l == nil {
		return nil, hostView{}, refusal.NotInitialized()
	}
	if err := p.started(ctx, l); err != nil {
		return nil, hostView{}, err
	}
	return l, l.host, nil
}

func orEmpty(c *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if c == nil {
		return &mcp.ClientCapabilities{}
	}
	return c
}
