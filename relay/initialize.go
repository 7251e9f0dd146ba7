package relay

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
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
// revision and is offered sampling only if the host can answer it (DESIGN
// §5: the firewall follows the host's era), and at server/discover for
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
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	init, ok := res.(*mcp.InitializeResult)
	ir, ok2 := req.(*mcp.ServerRequest[*mcp.InitializeParams])
	if !ok || !ok2 {
		return nil, errInternal("unexpected initialize types")
	}
	l, err := p.attachHost(ctx, hostView{session: ir.Session, era: init.ProtocolVersion, caps: ir.Params.Capabilities})
	if err != nil {
		return nil, err
	}
	init.Capabilities = l.mergedCapabilities()
	return init, nil
}

func (p *Proxy) discover(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	dr, ok := res.(*mcp.DiscoverResult)
	if !ok {
		return nil, errInternal("unexpected discover result")
	}
	l, err := p.modernLink(ctx)
	if err != nil {
		return nil, err
	}
	dr.Capabilities = l.mergedCapabilities()
	return dr, nil
}

// attachHost starts every upstream for a host that initialized and keeps
// the link until that host's session ends.
func (p *Proxy) attachHost(ctx context.Context, h hostView) (*link, error) {
	l := newLink(h)
	if err := p.connectAll(ctx, l, h.era); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close()
		return nil, errShuttingDown()
	}
	p.links[h.session] = l
	p.mu.Unlock()
	go func() {
		_ = h.session.Wait()
		p.detach(h.session)
	}()
	return l, nil
}

func (p *Proxy) detach(ss *mcp.ServerSession) {
	p.mu.Lock()
	l := p.links[ss]
	delete(p.links, ss)
	if l != nil {
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
		return nil, errShuttingDown()
	}
	if l != nil {
		return l, nil
	}
	l = newLink(hostView{era: modernEra})
	l.shared = true
	if err := p.connectAll(ctx, l, modernEra); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		l.close()
		return nil, errShuttingDown()
	}
	p.modern = l
	return l, nil
}

// connectAll starts every configured upstream for l.
func (p *Proxy) connectAll(ctx context.Context, l *link, era string) error {
	ups := make([]*upstream, 0, len(p.cfg.Upstreams))
	for _, cfg := range p.cfg.Upstreams {
		u, err := p.connect(l, cfg, era)
		if err != nil {
			for _, started := range ups {
				started.close()
			}
			p.log.Error("upstreams failed to start", zap.String("server", cfg.Name), zap.Error(err))
			return errUpstreamsStart()
		}
		ups = append(ups, u)
	}
	l.mu.Lock()
	l.upstreams = ups
	l.mu.Unlock()
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
		return nil, hostView{}, errNotInitialized()
	}
	return l, l.host, nil
}

func orEmpty(c *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if c == nil {
		return &mcp.ClientCapabilities{}
	}
	return c
}
