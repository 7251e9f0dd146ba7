package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// MCP carries W3C trace context in a request's params._meta under the
// header names themselves (SEP-414, an exception to _meta's prefixed
// keys); OpenTelemetry's own TraceContext propagator parses them, so the
// firewall never parses a traceparent by hand.
const (
	keyTraceparent = "traceparent"
	keyTracestate  = "tracestate"
)

// maxValueBytes caps what is parsed of either key. A version-00
// traceparent is 55 characters, and W3C asks vendors to keep tracestate
// within 512; a longer value is treated as absent rather than parsed.
const maxValueBytes = 512

// metaCarrier reads trace context from a _meta object. A value that is not
// a string, or is longer than maxValueBytes, reads as absent.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	if len(s) > maxValueBytes {
		return ""
	}
	return s
}

// Set is never used: the firewall reads trace context, it does not write
// it into anyone's _meta.
func (m metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string { return []string{keyTraceparent, keyTracestate} }

// Parent is ctx with the trace context a trusted caller (the host, the
// operator's own client) put in meta as the remote parent, so the
// firewall's spans continue the host's trace. Without a valid traceparent
// ctx is returned as it is and the firewall starts a trace of its own.
func Parent(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, metaCarrier(meta))
}

// untrustedCarrier is metaCarrier without tracestate: an untrusted peer's
// tracestate is vendor text it wrote, and is never parsed or kept.
type untrustedCarrier struct{ metaCarrier }

func (c untrustedCarrier) Get(key string) string {
	if key != keyTraceparent {
		return ""
	}
	return c.metaCarrier.Get(key)
}

// Link is the span context an untrusted peer (an upstream) claims in meta,
// as a link and never a parent: the peer cannot put the firewall's spans
// into a trace of its choosing, nor decide whether they are sampled
// (ParentBased sampling reads the parent only). Only the two ids are kept:
// its flags are dropped, its tracestate never read, and the link says it
// is the upstream's claim.
func Link(meta map[string]any) (trace.Link, bool) {
	if len(meta) == 0 {
		return trace.Link{}, false
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), untrustedCarrier{metaCarrier(meta)})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	claimed := trace.NewSpanContext(trace.SpanContextConfig{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Remote: true})
	return trace.Link{SpanContext: claimed, Attributes: []attribute.KeyValue{LinkFrom.String("upstream")}}, true
}
