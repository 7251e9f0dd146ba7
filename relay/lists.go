package relay

import (
	"context"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// With one upstream the host pages through the upstream's own lists; with
// several, each list is gathered whole from every upstream that offers the
// feature, and tool and prompt names are prefixed, so a cursor never has to
// say which server it belongs to. One upstream's names are prefixed too
// when the operator asked for it (Config.PrefixNames); its pages still
// pass through, renamed. Resources and templates keep their URIs:
// gathering them also records which upstream listed which (owners.go),
// and each upstream's part is capped there.

func (l *link) listTools(ctx context.Context, r *mcp.ListToolsRequest) (mcp.Result, error) {
	if u, ok := l.only(); ok {
		res, err := u.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor(r.Params, func(p *mcp.ListToolsParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListToolsResult{Tools: renamed(l, u, u.listed.toolsInOrder(res.Tools), l.exposedTool), NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	tools, err := gather(ctx, l, hasTools, (*mcp.ClientSession).Tools, func(u *upstream, t *mcp.Tool) *mcp.Tool {
		return u.listed.inOrder(t.Name, l.exposedTool(u, t))
	})
	return &mcp.ListToolsResult{Tools: tools}, err
}

func (l *link) listPrompts(ctx context.Context, r *mcp.ListPromptsRequest) (mcp.Result, error) {
	if u, ok := l.only(); ok {
		res, err := u.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor(r.Params, func(p *mcp.ListPromptsParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListPromptsResult{Prompts: renamed(l, u, res.Prompts, l.exposedPrompt), NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	prompts, err := gather(ctx, l, hasPrompts, (*mcp.ClientSession).Prompts, l.exposedPrompt)
	return &mcp.ListPromptsResult{Prompts: prompts}, err
}

// exposedTool is t as the host sees it: a copy under its exposed name.
func (l *link) exposedTool(u *upstream, t *mcp.Tool) *mcp.Tool {
	named := *t
	named.Name = l.exposed(u, t.Name)
	return &named
}

// exposedPrompt is pr as the host sees it: a copy under its exposed name.
func (l *link) exposedPrompt(u *upstream, pr *mcp.Prompt) *mcp.Prompt {
	named := *pr
	named.Name = l.exposed(u, pr.Name)
	return &named
}

// renamed is one upstream's page of items under the names the host sees
// them by: the page itself when names carry no prefix.
func renamed[T any](l *link, u *upstream, items []*T, name func(*upstream, *T) *T) []*T {
	if prefixed, _ := l.prefixed(); !prefixed {
		return items
	}
	out := make([]*T, len(items))
	for i, item := range items {
		out[i] = name(u, item)
	}
	return out
}

func (p *Proxy) listResources(ctx context.Context, l *link, r *mcp.ListResourcesRequest) (mcp.Result, error) {
	if u, ok := l.only(); ok {
		res, err := u.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor(r.Params, func(p *mcp.ListResourcesParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListResourcesResult{Resources: res.Resources, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	resources := []*mcp.Resource{}
	for _, u := range l.offering(hasResources) {
		rs, err := p.listResourcesOf(ctx, l, u)
		if err != nil {
			return nil, upstreamError(u, err)
		}
		resources = append(resources, rs...)
	}
	return &mcp.ListResourcesResult{Resources: resources}, nil
}

func (p *Proxy) listResourceTemplates(ctx context.Context, l *link, r *mcp.ListResourceTemplatesRequest) (mcp.Result, error) {
	if u, ok := l.only(); ok {
		res, err := u.session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor(r.Params, func(p *mcp.ListResourceTemplatesParams) string { return p.Cursor })})
		if err != nil {
			return nil, upstreamError(u, err)
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: res.ResourceTemplates, NextCursor: res.NextCursor, Cacheable: res.Cacheable}, nil
	}
	templates := []*mcp.ResourceTemplate{}
	for _, u := range l.offering(hasResources) {
		ts, err := p.listTemplatesOf(ctx, l, u)
		if err != nil {
			return nil, upstreamError(u, err)
		}
		templates = append(templates, ts...)
	}
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: templates}, nil
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

// readResource relays a read to the upstream that owns the URI (owner),
// and to no other. A retry with a requestState goes to the upstream the
// state was sealed for; resume then checks it is this very call's.
func (p *Proxy) readResource(ctx context.Context, l *link, h hostView, r *mcp.ReadResourceRequest) (mcp.Result, error) {
	u, err := p.readTarget(ctx, l, r.Params)
	if err != nil {
		return nil, err
	}
	token, unroute := p.progress.route(ctx, h.session, r.Params.GetProgressToken())
	defer unroute()
	ctx = withRoute(ctx, token)
	x := &exchange{u: u, host: h, origin: engine.Origin{Method: "resources/read", Name: r.Params.URI},
		digest: seal.CallDigest("resources/read", r.Params.URI, nil),
		send: func(ctx context.Context, cs *mcp.ClientSession, responses mcp.InputResponseMap, state string) (mcp.Result, error) {
			return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.Params.URI,
				Meta: upstreamMeta(u, h, r.Params.Meta, token.on(cs)), InputResponses: responses, RequestState: state})
		}}
	res, err := p.exchangeFor(ctx, x, r.Params.InputResponses, r.Params.RequestState)
	if err != nil || handedBack(res) {
		return res, err
	}
	rr := res.(*mcp.ReadResourceResult)
	return final(h, "resources/read", &mcp.ReadResourceResult{Contents: rr.Contents, Meta: scrubMeta(rr.Meta), Cacheable: rr.Cacheable})
}

// readTarget is the upstream a read goes to: the one its requestState was
// sealed for, if it carries one, else the URI's owner.
func (p *Proxy) readTarget(ctx context.Context, l *link, params *mcp.ReadResourceParams) (*upstream, error) {
	if params.RequestState == "" {
		return p.owner(ctx, l, params.URI)
	}
	if u, ok := l.only(); ok {
		return u, nil
	}
	server, ok := p.sealer.ServerOf(params.RequestState)
	u := l.byName(server)
	if !ok || u == nil {
		p.log.Warn("requestState rejected: not sealed by this firewall for a server of this link")
		return nil, refusal.StateRejected("not issued for this call")
	}
	return u, nil
}

// complete relays a completion to the server that owns what it completes:
// a prompt's (by its name's prefix, which is stripped) or a resource's or
// template's (owner). The host's _meta loses its protocol keys and its
// progress token, which describe its own hop.
func (p *Proxy) complete(ctx context.Context, l *link, r *mcp.CompleteRequest) (mcp.Result, error) {
	u, ref, err := p.completionTarget(ctx, l, r.Params.Ref)
	if err != nil {
		return nil, err
	}
	if err := u.refuseDown(); err != nil {
		return nil, err
	}
	if c := u.session.InitializeResult().Capabilities; c == nil || !hasCompletions(c) {
		return nil, refusal.CompletionsNotOffered(u.cfg.Name)
	}
	res, err := u.session.Complete(ctx, &mcp.CompleteParams{Meta: scrubMeta(r.Params.Meta),
		Argument: r.Params.Argument, Context: r.Params.Context, Ref: ref})
	if err != nil {
		return nil, upstreamError(u, err)
	}
	return &mcp.CompleteResult{Completion: res.Completion}, nil
}

// completionTarget is the upstream a completion goes to and the reference
// as that upstream knows it.
func (p *Proxy) completionTarget(ctx context.Context, l *link, ref *mcp.CompleteReference) (*upstream, *mcp.CompleteReference, error) {
	switch {
	case ref != nil && ref.Type == "ref/prompt":
		u, name, err := l.route(ref.Name)
		if err != nil {
			return nil, nil, err
		}
		return u, &mcp.CompleteReference{Type: ref.Type, Name: name}, nil
	case ref != nil && ref.Type == "ref/resource":
		u, err := p.owner(ctx, l, ref.URI)
		if err != nil {
			return nil, nil, err
		}
		return u, &mcp.CompleteReference{Type: ref.Type, URI: ref.URI}, nil
	}
	return nil, nil, refusal.CompletionRefInvalid()
}
