package relay

import (
	"context"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// With one upstream the host pages through the upstream's own lists; with
// several, each list is gathered whole from every upstream that offers the
// feature, and tool and prompt names are prefixed, so a cursor never has to
// say which server it belongs to.

func (l *link) listTools(ctx context.Context, r *mcp.ListToolsRequest) (mcp.Result, error) {
	if u, ok := l.only(); ok {
		res, err := u.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor(r.Params, func(p *mcp.ListToolsParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListToolsResult{Tools: res.Tools, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	tools, err := gather(ctx, l, hasTools, (*mcp.ClientSession).Tools, func(u *upstream, t *mcp.Tool) *mcp.Tool {
		named := *t
		named.Name = l.exposed(u, t.Name)
		return &named
	})
	return &mcp.ListToolsResult{Tools: tools}, err
}

func (l *link) listPrompts(ctx context.Context, r *mcp.ListPromptsRequest) (mcp.Result, error) {
	if u, ok := l.only(); ok {
		res, err := u.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor(r.Params, func(p *mcp.ListPromptsParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListPromptsResult{Prompts: res.Prompts, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	prompts, err := gather(ctx, l, hasPrompts, (*mcp.ClientSession).Prompts, func(u *upstream, pr *mcp.Prompt) *mcp.Prompt {
		named := *pr
		named.Name = l.exposed(u, pr.Name)
		return &named
	})
	return &mcp.ListPromptsResult{Prompts: prompts}, err
}

func (l *link) listResources(ctx context.Context, r *mcp.ListResourcesRequest) (mcp.Result, error) {
	if u, ok := l.only(); ok {
		res, err := u.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor(r.Params, func(p *mcp.ListResourcesParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListResourcesResult{Resources: res.Resources, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	resources, err := gather(ctx, l, hasResources, (*mcp.ClientSession).Resources, keep[mcp.Resource])
	return &mcp.ListResourcesResult{Resources: resources}, err
}

func (l *link) listResourceTemplates(ctx context.Context, r *mcp.ListResourceTemplatesRequest) (mcp.Result, error) {
	if u, ok := l.only(); ok {
		res, err := u.session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor(r.Params, func(p *mcp.ListResourceTemplatesParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: res.ResourceTemplates, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	templates, err := gather(ctx, l, hasResources, (*mcp.ClientSession).ResourceTemplates, keep[mcp.ResourceTemplate])
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: templates}, err
}

// gather lists every item of one kind from every upstream that offers it,
// renaming each as the host must see it. It never returns a nil slice, so
// an empty list is sent as [] rather than null.
func gather[P any, T any](ctx context.Context, l *link, offers func(*mcp.ServerCapabilities) bool,
	all func(*mcp.ClientSession, context.Context, P) iter.Seq2[*T, error], name func(*upstream, *T) *T) ([]*T, error) {
	out := []*T{}
	var none P
	for _, u := range l.offering(offers) {
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
// A retry with a requestState goes only to the upstream the state was
// sealed for.
func (p *Proxy) readResource(ctx context.Context, l *link, h hostView, r *mcp.ReadResourceRequest) (mcp.Result, error) {
	ups := l.offering(hasResources)
	if r.Params.RequestState != "" {
		u := p.stateOwner(ups, r.Params.RequestState)
		if u == nil {
			return nil, errStateRejected("not issued for this call")
		}
		ups = []*upstream{u}
	}
	var firstErr error
	token, unroute := p.progress.route(ctx, h.session, r.Params.GetProgressToken())
	defer unroute()
	for _, u := range ups {
		x := &exchange{u: u, host: h, origin: engine.Origin{Method: "resources/read", Name: r.Params.URI},
			digest: callDigest("resources/read", r.Params.URI, nil),
			send: func(ctx context.Context, cs *mcp.ClientSession, responses mcp.InputResponseMap, state string) (mcp.Result, error) {
				return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.Params.URI,
					Meta: upstreamMeta(u, h, r.Params.Meta, token), InputResponses: responses, RequestState: state})
			}}
		res, err := p.exchangeFor(ctx, x, r.Params.InputResponses, r.Params.RequestState)
		if err == nil && handedBack(res) {
			return res, nil
		}
		if err == nil {
			rr := res.(*mcp.ReadResourceResult)
			return final(h, "resources/read", &mcp.ReadResourceResult{Contents: rr.Contents, Meta: scrubMeta(rr.Meta), Cacheable: rr.Cacheable})
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = errInternal("no upstream offers resources")
	}
	return nil, firstErr
}

// stateOwner is the upstream among ups that a genuine requestState was
// sealed for, or nil.
func (p *Proxy) stateOwner(ups []*upstream, state string) *upstream {
	server, ok := p.sealer.serverOf(state)
	if !ok {
		return nil
	}
	for _, u := range ups {
		if u.cfg.Name == server {
			return u
		}
	}
	return nil
}

func (l *link) complete(ctx context.Context, r *mcp.CompleteRequest) (mcp.Result, error) {
	ups := l.offering(hasCompletions)
	if len(ups) == 0 {
		return nil, errInternal("no upstream offers completions")
	}
	res, err := ups[0].session.Complete(ctx, r.Params)
	if err != nil {
		return nil, upstreamError(ups[0], err)
	}
	return &mcp.CompleteResult{Completion: res.Completion}, nil
}
