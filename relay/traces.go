package relay

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx-fw/mcpx-fw/relay/tracing"
)

// The firewall's spans (Config.Tracer; nil starts none): a host's
// forwarded request (tools/call, ...), named by its method, child of the
// host's own trace when its _meta carries one; and the pipeline's spans
// (package pipeline) for what an upstream asks of the host, whose parent
// is the host call it belongs to (pushParent). Every attribute is the
// firewall's own word or the operator's config (tracing.Server etc.);
// nothing an upstream or a host wrote.

// noSpan is what every span helper returns when tracing is off: the API's
// no-op span, which allocates nothing.
func noSpan() trace.Span { return trace.SpanFromContext(context.Background()) }

// traceHostCall starts the span of a host request the relay forwards. The
// host is the operator's client, so the trace context in its _meta is
// trusted as the parent: the firewall's work on the call, and every
// decision it causes, joins the host's trace.
func (p *Proxy) traceHostCall(ctx context.Context, method string, req mcp.Request) (context.Context, trace.Span) {
	if p.cfg.Tracer == nil {
		return ctx, noSpan()
	}
	ctx = tracing.Parent(ctx, hostMeta(req))
	return p.cfg.Tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(tracing.Method.String(method)))
}

// hostMeta is the _meta of a forwarded host request that can carry trace
// context into a decision: a call that may lead an upstream to ask for
// sampling, elicitation or roots.
func hostMeta(req mcp.Request) map[string]any {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	case *mcp.ReadResourceRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	}
	return nil
}

// pushParent is the context an upstream's push is traced under. A push
// carries nothing that names its host call, so the parent is the one host
// call in flight on its upstream; with none, or several (which one caused
// it cannot be known), the push starts a trace of its own. A context that
// is not a push's (an input request inside its host call) already has its
// parent.
func pushParent(ctx context.Context) context.Context {
	u, _ := ctx.Value(pushKey{}).(*upstream)
	if u == nil {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, trace.SpanContextFromContext(u.soleCall()))
}

// soleCall is the context of the only host call in flight on u, or
// context.Background() when there is none or more than one.
func (u *upstream) soleCall() context.Context {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.inFlight) != 1 {
		return context.Background()
	}
	for c := range u.inFlight {
		return c.ctx
	}
	return context.Background()
}
