package relay

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// forwardMiddleware relays tools, prompts, resources and completions to the
// upstreams at the method level, so names, schemas, results and errors
// reach the host as the upstream sent them.
func (p *Proxy) forwardMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !forwarded(req) {
			return next(ctx, method, req)
		}
		ctx, span := p.traceHostCall(ctx, method, req)
		defer span.End()
		l, h, err := p.linkFor(ctx, req)
		if err != nil {
			return nil, err
		}
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			return l.listTools(ctx, r)
		case *mcp.CallToolRequest:
			return p.callTool(ctx, l, h, r)
		case *mcp.ListPromptsRequest:
			return l.listPrompts(ctx, r)
		case *mcp.GetPromptRequest:
			return p.getPrompt(ctx, l, h, r)
		case *mcp.ListResourcesRequest:
			return p.listResources(ctx, l, r)
		case *mcp.ListResourceTemplatesRequest:
			return p.listResourceTemplates(ctx, l, r)
		case *mcp.ReadResourceRequest:
			return p.readResource(ctx, l, h, r)
		case *mcp.CompleteRequest:
			return p.complete(ctx, l, r)
		}
		return next(ctx, method, req)
	}
}

// forwarded reports whether req goes to the upstreams.
func forwarded(req mcp.Request) bool {
	switch req.(type) {
	case *mcp.ListToolsRequest, *mcp.CallToolRequest, *mcp.ListPromptsRequest, *mcp.GetPromptRequest,
		*mcp.ListResourcesRequest, *mcp.ListResourceTemplatesRequest, *mcp.ReadResourceRequest, *mcp.CompleteRequest:
		return true
	}
	return false
}

func (p *Proxy) callTool(ctx context.Context, l *link, h hostView, r *mcp.CallToolRequest) (mcp.Result, error) {
	u, name, err := l.route(r.Params.Name)
	if err != nil {
		return nil, err
	}
	token, unroute := p.progress.route(ctx, h.session, r.Params.GetProgressToken())
	defer unroute()
	ctx = withRoute(ctx, token)
	defer u.track(name, ctx, token)()
	x := &exchange{u: u, host: h, origin: engine.Origin{Method: "tools/call", Name: name},
		digest: seal.CallDigest("tools/call", r.Params.Name, r.Params.Arguments),
		send: func(ctx context.Context, cs *mcp.ClientSession, responses mcp.InputResponseMap, state string) (mcp.Result, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: r.Params.Arguments,
				Meta: upstreamMeta(u, h, r.Params.Meta, token.on(cs)), InputResponses: responses, RequestState: state})
		}}
	res, err := p.exchangeFor(ctx, x, r.Params.InputResponses, r.Params.RequestState)
	if err != nil {
		return nil, err
	}
	return hostToolResult(h, res)
}

// hostToolResult is the upstream's tools/call result as host h gets it:
// its content, structured content and error flag, and its _meta without
// the protocol's keys; the firewall's own input_required answer as built.
func hostToolResult(h hostView, res mcp.Result) (mcp.Result, error) {
	if handedBack(res) {
		return res, nil
	}
	c := res.(*mcp.CallToolResult)
	return final(h, "tools/call", &mcp.CallToolResult{Content: c.Content, StructuredContent: c.StructuredContent, IsError: c.IsError, Meta: scrubMeta(c.Meta)})
}

func (p *Proxy) getPrompt(ctx context.Context, l *link, h hostView, r *mcp.GetPromptRequest) (mcp.Result, error) {
	u, name, err := l.route(r.Params.Name)
	if err != nil {
		return nil, err
	}
	args, _ := json.Marshal(r.Params.Arguments)
	token, unroute := p.progress.route(ctx, h.session, r.Params.GetProgressToken())
	defer unroute()
	ctx = withRoute(ctx, token)
	x := &exchange{u: u, host: h, origin: engine.Origin{Method: "prompts/get", Name: name},
		digest: seal.CallDigest("prompts/get", r.Params.Name, args),
		send: func(ctx context.Context, cs *mcp.ClientSession, responses mcp.InputResponseMap, state string) (mcp.Result, error) {
			return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: r.Params.Arguments,
				Meta: upstreamMeta(u, h, r.Params.Meta, token.on(cs)), InputResponses: responses, RequestState: state})
		}}
	res, err := p.exchangeFor(ctx, x, r.Params.InputResponses, r.Params.RequestState)
	if err != nil || handedBack(res) {
		return res, err
	}
	g := res.(*mcp.GetPromptResult)
	return final(h, "prompts/get", &mcp.GetPromptResult{Description: g.Description, Messages: g.Messages, Meta: scrubMeta(g.Meta)})
}

// exchangeFor relays x: through the input-request loop for a 2026-07-28
// upstream, through a bridge for an upstream that pushes behind a
// 2026-07-28 host (either resumed when the host retries with its
// requestState), else in one attempt, the upstream's pushes going to the
// host that initialized.
//
// A host's answers on a first call (no requestState of the firewall's) are
// to requests the firewall never made, and are dropped whatever their
// kind: a roots list would reach the upstream without the result stage and
// servers.<name>.roots.allow, an elicitation answer unchecked against any
// request. An upstream that needs them asks by input requests, which pass
// the pipeline.
func (p *Proxy) exchangeFor(ctx context.Context, x *exchange, answers mcp.InputResponseMap, state string) (mcp.Result, error) {
	if err := x.u.refuseDown(); err != nil {
		return nil, err
	}
	x.host = x.host.offeredTo(x.u.cfg) // the host is asked only what the upstream was offered
	switch {
	case state != "" && x.host.modern():
		return p.resume(ctx, x, answers, state)
	case state != "":
		return nil, refusal.StateRejected("not issued for this call")
	case x.u.modern():
		return p.relayInputs(ctx, x, nil, "", 0)
	case bridged(x):
		return p.bridgeCall(ctx, x)
	}
	res, err := x.send(ctx, x.u.session, nil, "")
	if err != nil {
		return nil, p.callError(ctx, x, err)
	}
	return res, nil
}

// callError is the host's answer when the upstream call of x failed: a
// -32042 once its URL elicitations are decided (urlElicitationRequired),
// anything else as upstreamError says.
func (p *Proxy) callError(ctx context.Context, x *exchange, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == mcp.CodeURLElicitationRequired {
		return p.urlElicitationRequired(ctx, x, we)
	}
	return upstreamError(x.u, err)
}

// handedBack reports whether res is the firewall's own input_required
// answer to a 2026-07-28 host, which goes out as built.
func handedBack(res mcp.Result) bool {
	_, _, needs := pendingInputs(res)
	return needs
}

// final is a rebuilt result as the host must see it: a 2026-07-28 host is
// told it is complete (servers on that revision must say so).
func final(h hostView, method string, res mcp.Result) (mcp.Result, error) {
	if !h.modern() {
		return res, nil
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, refusal.Internal("result could not be encoded")
	}
	fields := map[string]any{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, refusal.Internal("result could not be encoded")
	}
	return withResultType(method, fields, "complete")
}

// upstreamMeta is the _meta sent upstream: the host's own keys without the
// protocol's; the firewall's progress token for this call, if the host
// asked for progress; and, for a 2026-07-28 upstream, the capabilities the
// firewall offers on this request (requestOffer): what the host declared
// of sampling, elicitation and roots and the server's config allows, so
// the upstream asks only for what can be answered.
func upstreamMeta(u *upstream, h hostView, m mcp.Meta, progressToken any) mcp.Meta {
	out := scrubMeta(m)
	if out == nil {
		out = mcp.Meta{}
	}
	if progressToken != nil {
		out["progressToken"] = progressToken
	}
	if u.modern() {
		out[mcp.MetaKeyClientCapabilities] = wireCapabilities(requestOffer(u.cfg, h))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// upstreamError is the host's answer when a call to u failed: the
// upstream's own JSON-RPC error passes through as it sent it; anything else
// (a dead process, a broken stream, an unreadable answer) is the firewall's
// error naming the server, with the detail logged rather than sent. A
// -32042 is never passed on unchecked: a host's call (callError) decides
// its URL elicitations; here, outside one (a list, a completion), it is
// refused.
func upstreamError(u *upstream, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == mcp.CodeURLElicitationRequired {
		if !urlOffered(u) {
			return refusal.NotOffered(u.cfg.Name, "elicitation")
		}
		u.log.Warn("URL elicitation required outside a call that can decide it: refused")
		return refusal.URLElicitationUndecided(u.cfg.Name)
	}
	if errors.As(err, &we) {
		return refusal.PassedThrough(we)
	}
	if u.lost.Load() || connectionEnded(err) && !u.closing.Load() {
		return refusal.UpstreamLost(u.cfg.Name)
	}
	u.log.Warn("upstream call failed", zap.Error(err))
	return refusal.UpstreamFailed(u.cfg.Name)
}

// connectionEnded reports whether err says the session's stream ended
// under the call (or before it could be written): the call can fail a
// moment before the session's own end is seen (watchUpstream).
func connectionEnded(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE)
}

// scrubMeta drops protocol-owned _meta keys, which describe one hop only
// (protocol version, client or server info), and progress tokens, which
// are remapped per hop (see progressRoutes).
func scrubMeta(m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	out := mcp.Meta{}
	for k, v := range m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") || k == "progressToken" {
			continue
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
