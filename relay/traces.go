package relay

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/tracing"
)

// The firewall's spans (Config.Tracer; nil starts none):
//
//   - a host's forwarded request (tools/call, ...), named by its method,
//     child of the host's own trace when its _meta carries one;
//   - mcpxfw.<kind> for an upstream's request the pipeline runs whole
//     (firewall): validate, decide, wait for a review, ask the host,
//     check. Its parent is the host call it belongs to (pushParent), and
//     the upstream's own traceparent, if any, only a link;
//   - mcpxfw.decision for each stage (request, result), with the outcome;
//   - mcpxfw.host_answer for the host's (or an operator's) answer.
//
// Every attribute is the firewall's own word or the operator's config
// (tracing.Server etc.); nothing an upstream or a host wrote.
const (
	spanDecision   = "mcpxfw.decision"
	spanHostAnswer = "mcpxfw.host_answer"
)

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

// traceUpstreamRequest starts the span of an upstream's request of kind k
// that the pipeline runs whole. The upstream is the attacker: a
// traceparent in its _meta becomes at most a link (tracing.Link), never
// the parent, and never reaches the engine (forwardable drops _meta).
func (p *Proxy) traceUpstreamRequest(ctx context.Context, u *upstream, k *kind, in mcp.InputRequest) (context.Context, trace.Span) {
	if p.cfg.Tracer == nil {
		return ctx, noSpan()
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(tracing.Server.String(u.cfg.Name), tracing.Kind.String(string(k.name)))}
	if l, ok := tracing.Link(pushMeta(in)); ok {
		opts = append(opts, trace.WithLinks(l))
	}
	return p.cfg.Tracer.Start(pushParent(ctx), "mcpxfw."+string(k.name), opts...)
}

// pushMeta is the _meta of an upstream's request, which the upstream wrote.
func pushMeta(in mcp.InputRequest) map[string]any {
	switch r := in.(type) {
	case *mcp.CreateMessageWithToolsParams:
		if r != nil {
			return r.Meta
		}
	case *mcp.ElicitParams:
		if r != nil {
			return r.Meta
		}
	case *mcp.ListRootsParams:
		if r != nil {
			return r.Meta
		}
	}
	return nil
}

// traceDecision starts the span of one stage's decision of t, whose end
// (endDecision) records what was decided. Its context goes to the engine,
// so a decision record can name the span.
func (p *Proxy) traceDecision(ctx context.Context, t *stage, st engine.Stage) (context.Context, trace.Span) {
	if p.cfg.Tracer == nil {
		return ctx, noSpan()
	}
	return p.cfg.Tracer.Start(ctx, spanDecision, trace.WithAttributes(tracing.Server.String(t.u.cfg.Name),
		tracing.Kind.String(string(t.k.name)), tracing.Stage.String(string(st))))
}

// endDecision records t's final verdict on span and ends it: the outcome,
// the decision and review ids, the reason codes and the policy revision.
// A stage refused before any decision (a limit) has no decision id.
func (p *Proxy) endDecision(span trace.Span, t *stage) {
	if !span.IsRecording() {
		return
	}
	defer span.End()
	v := t.v
	if v.DecisionID == "" {
		span.SetStatus(codes.Error, "refused before a decision")
		return
	}
	span.SetAttributes(tracing.Outcome.String(v.Outcome.String()), tracing.DecisionID.String(v.DecisionID),
		tracing.ReasonCodes.StringSlice(v.ReasonCodes()), tracing.PolicyRevision.String(p.eng.Revision()))
	if t.reviewID != "" {
		span.SetAttributes(tracing.ReviewID.String(t.reviewID))
	}
	if v.Outcome == engine.OutcomeError {
		span.SetStatus(codes.Error, "not decided")
	}
}

// traceHostAnswer starts the span of the wait for c's answer: the host's
// model, or the operator's completion already written.
func (p *Proxy) traceHostAnswer(ctx context.Context, c *cleared) trace.Span {
	if p.cfg.Tracer == nil {
		return noSpan()
	}
	by := "host"
	if c.answer != nil {
		by = "operator"
	}
	_, span := p.cfg.Tracer.Start(ctx, spanHostAnswer, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(tracing.AnsweredBy.String(by)))
	return span
}

// endSpan ends span, marking it failed when err is set. The error's text
// is never recorded: it may quote a peer.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, "failed")
	}
	span.End()
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
