package tracing

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

const (
	goodParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	goodTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
)

// TestParentAndLink: a host's traceparent is the parent, with its
// tracestate; an upstream's is a link with the ids alone; anything that is
// not a valid W3C traceparent (the propagator's own parsing) is neither.
func TestParentAndLink(t *testing.T) {
	canary := "CANARY-tracestate"
	tests := []struct {
		name  string
		meta  map[string]any
		valid bool
	}{
		{"valid", map[string]any{"traceparent": goodParent, "tracestate": "rojo=00f067aa0ba902b7"}, true},
		{"valid, hostile tracestate", map[string]any{"traceparent": goodParent, "tracestate": "x=" + canary + strings.Repeat(",y=z", 40)}, true},
		{"none", map[string]any{"other": goodParent}, false},
		{"nil meta", nil, false},
		{"upper-case hex", map[string]any{"traceparent": strings.ToUpper(goodParent)}, false},
		{"short trace id", map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01"}, false},
		{"zero trace id", map[string]any{"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, false},
		{"zero span id", map[string]any{"traceparent": "00-" + goodTrace + "-0000000000000000-01"}, false},
		{"version ff", map[string]any{"traceparent": "ff-" + goodTrace + "-00f067aa0ba902b7-01"}, false},
		{"version 00 with extra", map[string]any{"traceparent": goodParent + "-" + canary}, false},
		{"not a string", map[string]any{"traceparent": map[string]any{"x": canary}}, false},
		{"a number", map[string]any{"traceparent": 42}, false},
		{"oversized", map[string]any{"traceparent": "01-" + goodTrace + "-00f067aa0ba902b7-01-" + strings.Repeat("a", 1<<20)}, false},
		{"control characters", map[string]any{"traceparent": "00-" + goodTrace + "-00f067aa0ba902b7-0\n"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := trace.SpanContextFromContext(Parent(context.Background(), tt.meta))
			if sc.IsValid() != tt.valid {
				t.Fatalf("Parent valid = %v, want %v", sc.IsValid(), tt.valid)
			}
			l, ok := Link(tt.meta)
			if ok != tt.valid {
				t.Fatalf("Link ok = %v, want %v", ok, tt.valid)
			}
			if !tt.valid {
				return
			}
			if sc.TraceID().String() != goodTrace || !sc.IsRemote() || !sc.IsSampled() {
				t.Errorf("parent = %v, want remote sampled %s", sc, goodTrace)
			}
			if l.SpanContext.TraceID().String() != goodTrace || l.SpanContext.TraceState().Len() != 0 || l.SpanContext.TraceFlags() != 0 {
				t.Errorf("link = %+v, want the ids alone (no tracestate, no flags)", l.SpanContext)
			}
			if len(l.Attributes) != 1 || l.Attributes[0] != LinkFrom.String("upstream") {
				t.Errorf("link attributes = %v, want only %s=upstream", l.Attributes, LinkFrom)
			}
		})
	}
}

// TestParentTracestateBounded: a tracestate longer than maxValueBytes is
// dropped whole, the traceparent still read.
func TestParentTracestateBounded(t *testing.T) {
	meta := map[string]any{"traceparent": goodParent, "tracestate": "a=" + strings.Repeat("b", maxValueBytes)}
	sc := trace.SpanContextFromContext(Parent(context.Background(), meta))
	if !sc.IsValid() || sc.TraceState().Len() != 0 {
		t.Fatalf("span context = %v, want valid with no tracestate", sc)
	}
}

func TestCheckEndpoint(t *testing.T) {
	tests := []struct {
		in       string
		insecure bool
		want     string // "" = refused
	}{
		{"https://collector:4318", false, "https://collector:4318/v1/traces"},
		{"https://collector:4318/custom/path", false, "https://collector:4318/custom/path"},
		{"http://127.0.0.1:4318/", true, "http://127.0.0.1:4318/v1/traces"},
		{"http://127.0.0.1:4318", false, ""},
		{"collector:4318", false, ""},
		{"grpc://collector:4317", true, ""},
	}
	for _, tt := range tests {
		got, err := CheckEndpoint(tt.in, tt.insecure)
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("CheckEndpoint(%q, %v) = %q, %v; want %q", tt.in, tt.insecure, got, err, tt.want)
		}
	}
}
