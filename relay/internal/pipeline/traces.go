package pipeline

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/tracing"
)

// The pipeline's spans (Deps.Tracer; nil starts none):
//
//   - mcpxfw.<kind> for an upstream's request the pipeline runs whole
//     (Run): validate, decide, wait for a review, ask the host, check.
//     Its parent is the host call it belongs to (Source.Parent), and the
//     upstream's own traceparent, if any, only a link;
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

// traceUpstreamRequest starts the span of an upstream's request of kind k
// that the pipeline runs whole. The upstream is the attacker: a
// traceparent in its _meta becomes at most a link (tracing.Link), never
// the parent, and never reaches the engine (forwardable drops _meta).
func (p *Pipeline) traceUpstreamRequest(ctx context.Context, src *Source, k *Kind, in mcp.InputRequest) (context.Context, trace.Span) {
	if p.tracer == nil {
		return ctx, noSpan()
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(tracing.Server.String(src.Server.Name), tracing.Kind.String(string(k.Name)))}
	if l, ok := tracing.Link(pushMeta(in)); ok {
		opts = append(opts, trace.WithLinks(l))
	}
	if src.Parent != nil {
		ctx = src.Parent(ctx)
	}
	return p.tracer.Start(ctx, "mcpxfw."+string(k.Name), opts...)
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
func (p *Pipeline) traceDecision(ctx context.Context, t *stage, st engine.Stage) (context.Context, trace.Span) {
	if p.tracer == nil {
		return ctx, noSpan()
	}
	return p.tracer.Start(ctx, spanDecision, trace.WithAttributes(tracing.Server.String(t.src.Server.Name),
		tracing.Kind.String(string(t.k.Name)), tracing.Stage.String(string(st))))
}

// endDecision records t's final verdict on span and ends it: the outcome,
// the decision and review ids, the reason codes and the policy revision.
// A stage refused before any decision (a limit) has no decision id.
func (p *Pipeline) endDecision(span trace.Span, t *stage) {
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
func (p *Pipeline) traceHostAnswer(ctx context.Context, c *Cleared) trace.Span {
	if p.tracer == nil {
		return noSpan()
	}
	by := "host"
	if c.answer != nil {
		by = "operator"
	}
	_, span := p.tracer.Start(ctx, spanHostAnswer, trace.WithSpanKind(trace.SpanKindClient),
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
