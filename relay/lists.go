package relay

import (
	"context"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With one upstream the host pages through the upstream's own lists; with
// several, each list is gathered whole from every upstream that offers the
// feature, and tool and prompt names are prefixed, so a cursor never has to
// say which server it belongs to.

func (p *Proxy) listTools(ctx context.Context, r *mcp.ListToolsRequest) (mcp.Result, error) {
	if u, ok := p.only(); ok {
		res, err := u.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor(r.Params, func(p *mcp.ListToolsParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListToolsResult{Tools: res.Tools, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	tools, err := gather(ctx, p, hasTools, (*mcp.ClientSession).Tools, func(u *upstream, t *mcp.Tool) *mcp.Tool {
		named := *t
		named.Name = p.exposed(u, t.Name)
		return &named
	})
	return &mcp.ListToolsResult{Tools: tools}, err
}

func (p *Proxy) listPrompts(ctx context.Context, r *mcp.ListPromptsRequest) (mcp.Result, error) {
	if u, ok := p.only(); ok {
		res, err := u.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor(r.Params, func(p *mcp.ListPromptsParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListPromptsResult{Prompts: res.Prompts, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	prompts, err := gather(ctx, p, hasPrompts, (*mcp.ClientSession).Prompts, func(u *upstream, pr *mcp.Prompt) *mcp.Prompt {
		named := *pr
		named.Name = p.exposed(u, pr.Name)
		return &named
	})
	return &mcp.ListPromptsResult{Prompts: prompts}, err
}

func (p *Proxy) listResources(ctx context.Context, r *mcp.ListResourcesRequest) (mcp.Result, error) {
	if u, ok := p.only(); ok {
		res, err := u.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor(r.Params, func(p *mcp.ListResourcesParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListResourcesResult{Resources: res.Resources, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	resources, err := gather(ctx, p, hasResources, (*mcp.ClientSession).Resources, keep[mcp.Resource])
	return &mcp.ListResourcesResult{Resources: resources}, err
}

func (p *Proxy) listResourceTemplates(ctx context.Context, r *mcp.ListResourceTemplatesRequest) (mcp.Result, error) {
	if u, ok := p.only(); ok {
		res, err := u.session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor(r.Params, func(p *mcp.ListResourceTemplatesParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: res.ResourceTemplates, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	templates, err := gather(ctx, p, hasResources, (*mcp.ClientSession).ResourceTemplates, keep[mcp.ResourceTemplate])
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: templates}, err
}

// gather lists every item of one kind from every upstream that offers it,
// renaming each as the host must see it. It never returns a nil slice, so
// an empty list is sent as [] rather than null.
func gather[P any, T any](ctx context.Context, p *Proxy, offers func(*mcp.ServerCapabilities) bool,
	all func(*mcp.ClientSession, context.Context, P) iter.Seq2[*T, error], name func(*upstream, *T) *T) ([]*T, error) {
	out := []*T{}
	var none P
	for _, u := range p.offering(offers) {
		for item, err := range all(u.session, ctx, none) {
			if err != nil {
				return nil, upstreamError(u, err)
			}
			out = append(out, name(u, item))
		}
	}
	return out, nil
}

func keep[T any](_ *upstream, item *T) *T { return item }

func hasTools(c *mcp.ServerCapabilities) bool       { return c.Tools != nil }
func hasPrompts(c *mcp.ServerCapabilities) bool     { return c.Prompts != nil }
func hasResources(c *mcp.ServerCapabilities) bool   { return c.Resources != nil }
func hasCompletions(c *mcp.ServerCapabilities) bool { return c.Completions != nil }

// only returns the upstream when there is exactly one.
func (p *Proxy) only() (*upstream, bool) {
	ups := p.upstreamList()
	if len(ups) != 1 {
		return nil, false
	}
	return ups[0], true
}

// cursor reads the paging cursor of a list request, whose params are
// optional on the wire.
func cursor[P any](p *P, get func(*P) string) string {
	if p == nil {
		return ""
	}
	return get(p)
}

// readResource asks the upstreams that offer resources in configured
// order; resources keep their URIs, so the first that knows the URI wins.
func (p *Proxy) readResource(ctx context.Context, r *mcp.ReadResourceRequest) (mcp.Result, error) {
	var firstErr error
	for _, u := range p.offering(hasResources) {
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
	ups := p.offering(hasCompletions)
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
