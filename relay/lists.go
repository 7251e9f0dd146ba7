package relay

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With one upstream the host pages through the upstream's own lists; with
// several, each list is gathered whole from every upstream and names are
// prefixed, so a cursor never has to say which server it belongs to.

func (p *Proxy) listTools(ctx context.Context, r *mcp.ListToolsRequest) (mcp.Result, error) {
	if ups := p.upstreamList(); len(ups) == 1 {
		res, err := ups[0].session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor(r.Params, func(p *mcp.ListToolsParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(ups[0], err)
		}
		return &mcp.ListToolsResult{Tools: res.Tools, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	out := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
	for _, u := range p.offering(func(c *mcp.ServerCapabilities) bool { return c.Tools != nil }) {
		for t, err := range u.session.Tools(ctx, nil) {
			if err != nil {
				return nil, upstreamError(u, err)
			}
			named := *t
			named.Name = p.exposed(u, t.Name)
			out.Tools = append(out.Tools, &named)
		}
	}
	return out, nil
}

func (p *Proxy) listPrompts(ctx context.Context, r *mcp.ListPromptsRequest) (mcp.Result, error) {
	if ups := p.upstreamList(); len(ups) == 1 {
		res, err := ups[0].session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor(r.Params, func(p *mcp.ListPromptsParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(ups[0], err)
		}
		return &mcp.ListPromptsResult{Prompts: res.Prompts, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	out := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}
	for _, u := range p.offering(func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil }) {
		for pr, err := range u.session.Prompts(ctx, nil) {
			if err != nil {
				return nil, upstreamError(u, err)
			}
			named := *pr
			named.Name = p.exposed(u, pr.Name)
			out.Prompts = append(out.Prompts, &named)
		}
	}
	return out, nil
}

func (p *Proxy) listResources(ctx context.Context, r *mcp.ListResourcesRequest) (mcp.Result, error) {
	if ups := p.upstreamList(); len(ups) == 1 {
		res, err := ups[0].session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor(r.Params, func(p *mcp.ListResourcesParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(ups[0], err)
		}
		return &mcp.ListResourcesResult{Resources: res.Resources, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, u := range p.offering(func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
		for res, err := range u.session.Resources(ctx, nil) {
			if err != nil {
				return nil, upstreamError(u, err)
			}
			out.Resources = append(out.Resources, res)
		}
	}
	return out, nil
}

func (p *Proxy) listResourceTemplates(ctx context.Context, r *mcp.ListResourceTemplatesRequest) (mcp.Result, error) {
	if ups := p.upstreamList(); len(ups) == 1 {
		res, err := ups[0].session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor(r.Params, func(p *mcp.ListResourceTemplatesParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(ups[0], err)
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: res.ResourceTemplates, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	out := &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}}
	for _, u := range p.offering(func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
		for t, err := range u.session.ResourceTemplates(ctx, nil) {
			if err != nil {
				return nil, upstreamError(u, err)
			}
			out.ResourceTemplates = append(out.ResourceTemplates, t)
		}
	}
	return out, nil
}

// readResource asks the upstreams that offer resources in configured
// order; resources keep their URIs, so the first that knows the URI wins.
func (p *Proxy) readResource(ctx context.Context, r *mcp.ReadResourceRequest) (mcp.Result, error) {
	var firstErr error
	for _, u := range p.offering(func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
		res, err := u.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.Params.URI, Meta: scrubMeta(r.Params.Meta)})
		if err == nil {
			return &mcp.ReadResourceResult{Contents: res.Contents, Meta: scrubMeta(res.Meta), Cacheable: res.Cacheable}, nil
		}
		if firstErr == nil {
			firstErr = upstreamError(u, err)
		}
	}
	if firstErr == nil {
		firstErr = internalError("no upstream offers resources")
	}
	return nil, firstErr
}

func (p *Proxy) complete(ctx context.Context, r *mcp.CompleteRequest) (mcp.Result, error) {
	ups := p.offering(func(c *mcp.ServerCapabilities) bool { return c.Completions != nil })
	if len(ups) == 0 {
		return nil, internalError("no upstream offers completions")
	}
	res, err := ups[0].session.Complete(ctx, r.Params)
	if err != nil {
		return nil, upstreamError(ups[0], err)
	}
	return &mcp.CompleteResult{Completion: res.Completion}, nil
}

// offering lists the upstreams whose declared capabilities pass has.
func (p *Proxy) offering(has func(*mcp.ServerCapabilities) bool) []*upstream {
	var out []*upstream
	for _, u := range p.upstreamList() {
		if c := u.session.InitializeResult().Capabilities; c != nil && has(c) {
			out = append(out, u)
		}
	}
	return out
}

// cursor reads the paging cursor of a list request, whose params are
// optional on the wire.
func cursor[P any](p *P, get func(*P) string) string {
	if p == nil {
		return ""
	}
	return get(p)
}
