package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpCollector is an OTLP/HTTP traces endpoint: a peer that decodes what the
// firewall exports as any collector would.
type otlpCollector struct {
	mu    sync.Mutex
	raw   [][]byte // each export's decoded body
	spans []*tracepb.Span
}

func startOTLPCollector(t *testing.T) (*otlpCollector, string) {
	c := &otlpCollector{}
	srv := httptest.NewServer(http.HandlerFunc(c.export))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func (c *otlpCollector) export(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(raw, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.raw = append(c.raw, raw)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// received is what the collector holds so far.
func (c *otlpCollector) received() ([]*tracepb.Span, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...), bytes.Join(c.raw, nil)
}

// waitSpans polls until every trace id in traces has a span named name.
func (c *otlpCollector) waitSpans(t *testing.T, name string, traces []string) []*tracepb.Span {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		spans, _ := c.received()
		missing := 0
		for _, id := range traces {
			if len(spansIn(spans, id, name)) == 0 {
				missing++
			}
		}
		if missing == 0 {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d traces have no %s span; got %d spans", missing, len(traces), name, len(spans))
		}
	}
}

func spansIn(spans []*tracepb.Span, traceID, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if hex.EncodeToString(s.TraceId) == traceID && s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// traceCanary is written by the upstream into its prompt and into the
// trace context of its push; none of it may reach the collector.
const traceCanary = "CANARY-TRACE-7f3a"

// TestTracesFollowTheHost runs the built binary with tracing on: a host
// calls the peer upstream's sample tool with its own traceparent, and the
// upstream pushes sampling with trace context of its own, well-formed or
// hostile. Every decision's span is in the host's trace, under the host's
// call; the upstream's traceparent is a link at most; nothing the
// upstream wrote reaches the collector; and every call is answered.
func TestTracesFollowTheHost(t *testing.T) {
	col, url := startOTLPCollector(t)
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	appendConfig(t, cfg, fmt.Sprintf("tracing:\n  otlp:\n    endpoint: %s\n    insecure: true\n", url))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	foreign := "0af7651916cd43dd8448eb211c80319c"
	cases := []struct {
		name     string
		upstream map[string]any // the push's _meta
		link     string         // the trace id the upstream's link claims; "" = no link
	}{
		{"no trace context", nil, ""},
		{"a well-formed foreign traceparent", map[string]any{"traceparent": "00-" + foreign + "-b7ad6b7169203331-01",
			"tracestate": "evil=" + traceCanary}, foreign},
		{"a malformed traceparent", map[string]any{"traceparent": "00-" + traceCanary + "-b7ad6b7169203331-01", "tracestate": traceCanary}, ""},
		{"an oversized traceparent", map[string]any{"traceparent": "01-" + foreign + "-b7ad6b7169203331-01-" + strings.Repeat(traceCanary, 1<<14)}, ""},
		{"a traceparent that is an object", map[string]any{"traceparent": map[string]any{traceCanary: traceCanary}, "tracestate": []any{traceCanary}}, ""},
	}
	var traces []string
	for i, tc := range cases {
		hostTrace, hostSpan := fmt.Sprintf("%032x", 0xa11ce000+i), fmt.Sprintf("%016x", 0xb0b000+i)
		traces = append(traces, hostTrace)
		params := map[string]any{"messages": []any{map[string]any{"role": "user",
			"content": map[string]any{"type": "text", "text": "Say hello. " + traceCanary}}}, "maxTokens": 100}
		if tc.upstream != nil {
			params["_meta"] = tc.upstream
		}
		raw, _ := json.Marshal(params)
		got, err := host.SampleWithMeta(t.Context(), raw, map[string]any{
			"traceparent": "00-" + hostTrace + "-" + hostSpan + "-01", "tracestate": "host=ok"})
		if err != nil {
			t.Fatalf("%s: sample tool: %v", tc.name, err)
		}
		checkOutcome(t, got, 0, "")
	}
	_ = host.Close() // serve exits and flushes what it batched
	spans := col.waitSpans(t, "mcpxfw.sampling", traces)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkTrace(t, spans, traces[i], fmt.Sprintf("%016x", 0xb0b000+i), tc.link)
		})
	}
	_, raw := col.received()
	if bytes.Contains(raw, []byte(traceCanary)) || bytes.Contains(raw, []byte("Say hello")) {
		t.Error("the collector received text the upstream wrote")
	}
	for _, s := range spans {
		if hex.EncodeToString(s.TraceId) == foreign {
			t.Errorf("span %s is in the upstream's trace %s", s.Name, foreign)
		}
	}
	checkLoggedTraces(t, filepath.Join(filepath.Dir(cfg), "decisions.jsonl"), spans)
}

// checkLoggedTraces: every decision span's decision, in the decision log,
// names that span and its trace (trace_id, span_id, as OPA's events do),
// so a log line leads to its trace.
func checkLoggedTraces(t *testing.T, path string, spans []*tracepb.Span) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string][2]string{}
	for line := range bytes.SplitSeq(bytes.TrimSpace(raw), []byte("\n")) {
		var ev struct {
			DecisionID string `json:"decision_id"`
			TraceID    string `json:"trace_id"`
			SpanID     string `json:"span_id"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("decision log line: %v", err)
		}
		logged[ev.DecisionID] = [2]string{ev.TraceID, ev.SpanID}
	}
	n := 0
	for _, s := range spans {
		if s.Name != "mcpxfw.decision" {
			continue
		}
		n++
		id := attr(s, "mcpxfw.decision_id")
		want := [2]string{hex.EncodeToString(s.TraceId), hex.EncodeToString(s.SpanId)}
		if got, ok := logged[id]; !ok || got != want {
			t.Errorf("decision %s logged with trace/span %v, want its span's %v", id, got, want)
		}
	}
	if n == 0 {
		t.Error("no decision spans to compare with the decision log")
	}
}

// checkTrace checks one host call's trace: tools/call under the host's
// span, mcpxfw.sampling under it (linked to the upstream's claim, if
// any), both decisions and the host's answer under that, in the
// firewall's own words.
func checkTrace(t *testing.T, spans []*tracepb.Span, traceID, hostSpan, link string) {
	call := spansIn(spans, traceID, "tools/call")
	sampling := spansIn(spans, traceID, "mcpxfw.sampling")
	if len(call) != 1 || len(sampling) != 1 {
		t.Fatalf("trace %s: %d tools/call and %d mcpxfw.sampling spans, want one each", traceID, len(call), len(sampling))
	}
	if got := hex.EncodeToString(call[0].ParentSpanId); got != hostSpan {
		t.Errorf("tools/call parent = %s, want the host's span %s", got, hostSpan)
	}
	if !bytes.Equal(sampling[0].ParentSpanId, call[0].SpanId) {
		t.Error("mcpxfw.sampling is not under the host's tools/call")
	}
	if attr(sampling[0], "mcpxfw.server") != "peer" || attr(sampling[0], "mcpxfw.kind") != "sampling" {
		t.Errorf("mcpxfw.sampling attributes = %v", sampling[0].Attributes)
	}
	checkLink(t, sampling[0], link)
	stages := map[string]bool{}
	for _, d := range spansIn(spans, traceID, "mcpxfw.decision") {
		if !bytes.Equal(d.ParentSpanId, sampling[0].SpanId) || attr(d, "mcpxfw.outcome") != "pass" ||
			!strings.HasPrefix(attr(d, "mcpxfw.decision_id"), "dc-") || attr(d, "mcpxfw.policy.revision") == "" {
			t.Errorf("decision span %v, want a pass under mcpxfw.sampling with its id and revision", d.Attributes)
		}
		stages[attr(d, "mcpxfw.stage")] = true
	}
	if !stages["request"] || !stages["result"] {
		t.Errorf("decision stages = %v, want request and result", stages)
	}
	if a := spansIn(spans, traceID, "mcpxfw.host_answer"); len(a) != 1 || attr(a[0], "mcpxfw.answered_by") != "host" {
		t.Errorf("host answer spans = %d, want one answered by the host", len(a))
	}
}

// checkLink: the upstream's traceparent, when valid, is one link with its
// ids alone (no sampled flag, no tracestate), marked as the upstream's;
// otherwise there is none.
func checkLink(t *testing.T, s *tracepb.Span, want string) {
	if want == "" {
		if len(s.Links) != 0 {
			t.Errorf("links = %v, want none", s.Links)
		}
		return
	}
	if len(s.Links) != 1 {
		t.Fatalf("links = %v, want the upstream's one", s.Links)
	}
	l := s.Links[0]
	if hex.EncodeToString(l.TraceId) != want || l.TraceState != "" || l.Flags&uint32(tracepb.SpanFlags_SPAN_FLAGS_TRACE_FLAGS_MASK) != 0 || len(l.Attributes) != 1 ||
		l.Attributes[0].Key != "mcpxfw.link.from" || l.Attributes[0].Value.GetStringValue() != "upstream" {
		t.Errorf("link = %v, want %s with no flags nor tracestate, marked mcpxfw.link.from=upstream", l, want)
	}
}
