package relay

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// interceptPushes takes an upstream's elicitation/create and roots/list
// pushes before the SDK's client handles them. The SDK's own elicitation
// handling checks the schema with rules of its own before any handler
// runs (it refuses valid SEP-1330 enum schemas) and quotes the user's
// value in its content-check errors; its roots handling answers from the
// client's own list. Here both go through the firewall's pipeline instead,
// with the firewall's validation as the only check (the guard has already
// screened the raw bytes of an elicitation).
func (p *Proxy) interceptPushes(u *upstream) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case pipeline.MethodElicit:
				params := &mcp.ElicitParams{}
				if r, ok := req.(*mcp.ElicitRequest); ok && r.Params != nil {
					params = r.Params
				}
				return p.onElicit(ctx, u, params)
			case pipeline.MethodListRoots:
				return p.onRoots(ctx, u)
			}
			return next(ctx, method, req)
		}
	}
}

// onElicit is the firewall for an elicitation pushed by an upstream
// (revisions up to 2025-11-25). A refusal is the legacy answer of the wire
// table (refusal.LegacyElicitAnswer): a "no" declines, an expiry cancels,
// anything else is an error.
func (p *Proxy) onElicit(ctx context.Context, u *upstream, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	res, err := p.onPush(ctx, u, pipeline.Elicitation, params)
	return refusal.LegacyElicitAnswer(resultAs[*mcp.ElicitResult](res, err))
}

// onRoots is the firewall for an upstream's roots/list push: the host's
// list, narrowed to the server's roots.allow and checked by the policy.
func (p *Proxy) onRoots(ctx context.Context, u *upstream) (*mcp.ListRootsResult, error) {
	return resultAs[*mcp.ListRootsResult](p.onPush(ctx, u, pipeline.Roots, &mcp.ListRootsParams{}))
}

// onPush runs a legacy push of kind k (elicitation, roots) through the
// firewall, or hands it to its bridged call. A push for what the host did
// not declare is refused before any decision. (What servers.<name>
// withholds is refused before the push reaches here, where the offers are
// made.)
func (p *Proxy) onPush(ctx context.Context, u *upstream, k *pipeline.Kind, in mcp.InputRequest) (mcp.InputResponse, error) {
	if !k.Declared(u.link.host.caps) {
		return nil, refusal.NotOffered(u.cfg.Name, k.Capability)
	}
	in, sent := p.pushInSentOrder(u, in)
	ctx = withSent(ctx, sent)
	if u.link.bridge != nil {
		return p.bridgePush(ctx, u, k, in)
	}
	if u.link.shared {
		return nil, p.noHostFor(u, k, "a push outside any bridged call of a 2026-07-28 host")
	}
	ctx, cancel := u.link.whileAlive(fromUpstream(ctx, u))
	defer cancel()
	return p.pipe.Run(ctx, p.source(u, u.link.host, engine.Origin{}), k, in)
}

// elicitParamsKey carries, in the context of one ServerSession.Elicit call,
// the params that call really sends (see elicitHost).
type elicitParamsKey struct{}

// elicitHost asks a host to elicit params. The SDK's ServerSession.Elicit
// would check the host's answer against the requested schema with its own
// rules, which refuse valid SEP-1330 schemas and quote the user's value in
// their errors; the firewall's result stage (validate.ElicitationResult)
// must be the only check. So Elicit is called with the schema left out,
// which it then does not check, and restoreElicitParams puts the cleared
// params back in place as the request is sent.
func elicitHost(ctx context.Context, host *mcp.ServerSession, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	bare := *params
	bare.RequestedSchema = nil
	return host.Elicit(context.WithValue(ctx, elicitParamsKey{}, params), &bare)
}

// restoreElicitParams is the host-facing server's sending middleware that
// completes elicitHost: an elicitation/create sent with params in its
// context goes out with exactly those params.
func restoreElicitParams(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if params, ok := ctx.Value(elicitParamsKey{}).(*mcp.ElicitParams); ok && method == pipeline.MethodElicit {
			// ServerSession's requests carry their params as mcp.Params.
			if r, ok := req.(*mcp.ServerRequest[mcp.Params]); ok {
				r.Params = params
			}
		}
		return next(ctx, method, req)
	}
}
