package relay

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// initializeMiddleware connects the upstreams while the host's initialize
// is answered, so that each upstream session speaks the host's protocol
// version and is offered sampling only if the host can answer it
// (DESIGN §5: the firewall follows the host's era). The SDK handles
// initialize synchronously, so no other host request can arrive first.
func (p *Proxy) initializeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "initialize" {
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		init, ok := res.(*mcp.InitializeResult)
		ir, ok2 := req.(*mcp.ServerRequest[*mcp.InitializeParams])
		if !ok || !ok2 {
			return nil, internalError(fmt.Sprintf("unexpected initialize types %T, %T", res, req))
		}
		if err := p.attachHost(ctx, ir, init.ProtocolVersion); err != nil {
			p.log.Error("upstreams failed to start", zap.Error(err))
			return nil, internalError("upstream servers failed to start")
		}
		init.Capabilities = p.mergedCapabilities()
		return init, nil
	}
}

// attachHost records the host session and starts every upstream at the
// host's protocol version.
func (p *Proxy) attachHost(ctx context.Context, req *mcp.ServerRequest[*mcp.InitializeParams], era string) error {
	caps := req.Params.Capabilities
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	p.mu.Lock()
	p.host, p.hostCaps, p.hostEra = req.Session, caps, era
	p.mu.Unlock()
	ups := make([]*upstream, 0, len(p.cfg.Upstreams))
	for _, cfg := range p.cfg.Upstreams {
		u, err := p.connect(ctx, cfg, era, caps)
		if err != nil {
			for _, started := range ups {
				started.close()
			}
			return fmt.Errorf("upstream %s: %w", cfg.Name, err)
		}
		ups = append(ups, u)
	}
	p.mu.Lock()
	p.upstreams = ups
	p.mu.Unlock()
	return nil
}

// mergedCapabilities offers the host what any upstream offers (tools,
// prompts, resources, completions) and nothing the firewall cannot relay.
func (p *Proxy) mergedCapabilities() *mcp.ServerCapabilities {
	out := &mcp.ServerCapabilities{}
	for _, u := range p.upstreamList() {
		c := u.session.InitializeResult().Capabilities
		if c == nil {
			continue
		}
		if c.Tools != nil {
			out.Tools = &mcp.ToolCapabilities{}
		}
		if c.Prompts != nil {
			out.Prompts = &mcp.PromptCapabilities{}
		}
		if c.Resources != nil {
			out.Resources = &mcp.ResourceCapabilities{}
		}
		if c.Completions != nil {
			out.Completions = &mcp.CompletionCapabilities{}
		}
	}
	return out
}

func (p *Proxy) upstreamList() []*upstream {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.upstreams
}

// hostSession returns the host's session and what it declared.
func (p *Proxy) hostSession() (*mcp.ServerSession, *mcp.ClientCapabilities, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.host, p.hostCaps, p.hostEra
}
