package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Words that must never reach a masked decision log: each sits in a
// different place a person's or a model's words can be.
const (
	systemWords     = "SYSTEM-WORDS-alpha"
	promptWords     = "PROMPT-WORDS-bravo"
	toolUseWords    = "TOOL-USE-WORDS-charlie"
	toolResultWords = "TOOL-RESULT-WORDS-delta"
	completionWords = "COMPLETION-WORDS-echo"
)

var loggedWords = []string{systemWords, promptWords, toolUseWords, toolResultWords, completionWords}

// loggedParams carries every kind of text once, and the prompt twice.
var loggedParams = `{"systemPrompt":"` + systemWords + `","maxTokens":100,
 "messages":[
  {"role":"user","content":{"type":"text","text":"` + promptWords + `"}},
  {"role":"assistant","content":{"type":"tool_use","id":"c1","name":"search","input":{"q":"` + toolUseWords + `"}}},
  {"role":"user","content":{"type":"tool_result","toolUseId":"c1","content":[{"type":"text","text":"` + toolResultWords + `"}]}},
  {"role":"assistant","content":{"type":"text","text":"ok"}},
  {"role":"user","content":[{"type":"text","text":"` + promptWords + `"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}],
 "tools":[{"name":"search","inputSchema":{"type":"object"}}]}`

var loggedResult = `{"role":"assistant","model":"m","content":{"type":"text","text":"` + completionWords + `"},"stopReason":"endTurn"}`

// logDecisions runs a request and its result through an engine logging to
// a buffer, and returns the two events.
func logDecisions(t *testing.T, cfg Config) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	cfg.DecisionLog = &buf
	cfg.Policy = PolicyConfig{Dir: "../testdata/policies/permit-all"}
	e, _ := newTestEngine(t, cfg)
	s := sampling("notes", loggedParams)
	if v := e.Decide(t.Context(), s); v.Outcome != OutcomePass {
		t.Fatalf("request: %v %v %v", v.Outcome, v.ReasonCodes(), v.Err)
	}
	if v := e.Check(t.Context(), s, []byte(loggedResult)); v.Outcome != OutcomePass {
		t.Fatalf("result: %v %v %v", v.Outcome, v.ReasonCodes(), v.Err)
	}
	var events []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("decision log line is not JSON: %v", err)
		}
		events = append(events, ev)
	}
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
	return events
}

func TestDecisionLogMasksText(t *testing.T) {
	events := logDecisions(t, Config{})
	raw, _ := json.Marshal(events)
	for _, w := range append(loggedWords, "iVBORw0KGgo=") {
		if strings.Contains(string(raw), w) {
			t.Errorf("masked decision log contains %q", w)
		}
	}
	in := events[0]["input"].(map[string]any)
	msgs := in["request"].(map[string]any)["messages"].([]any)
	first := msgs[0].(map[string]any)["content"].(map[string]any)["text"]
	again := msgs[4].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if first != again || !strings.HasPrefix(first.(string), "hmac-sha256:") {
		t.Errorf("equal texts logged as %v and %v, want one digest", first, again)
	}
	if texts := in["facts"].(map[string]any)["texts"].([]any); texts[1] != first {
		t.Errorf("facts.texts[1] = %v, want the prompt's digest %v", texts[1], first)
	}
	if _, ok := events[0]["masked"]; !ok {
		t.Error("event lacks masked")
	}
}

func TestDecisionLogIncludeContent(t *testing.T) {
	events := logDecisions(t, Config{IncludeContent: true})
	raw, _ := json.Marshal(events)
	for _, w := range loggedWords {
		if !strings.Contains(string(raw), w) {
			t.Errorf("decision log with content lacks %q", w)
		}
	}
	if _, ok := events[0]["masked"]; ok {
		t.Error("event with content lists masked paths")
	}
}

func TestDecisionLogEventShape(t *testing.T) {
	ev := logDecisions(t, Config{})[1]
	for _, key := range []string{"decision_id", "path", "input", "result", "timestamp", "labels", "metrics"} {
		if _, ok := ev[key]; !ok {
			t.Errorf("event lacks %s", key)
		}
	}
	labels := ev["labels"].(map[string]any)
	if labels["stage"] != "result" || len(labels["policy_revision"].(string)) != 12 {
		t.Errorf("labels %v", labels)
	}
	metrics := ev["metrics"].(map[string]any)
	for _, m := range []string{"timer_validate_ns", "timer_usage_read_ns", "timer_rego_query_eval_ns"} {
		if n, ok := metrics[m].(float64); !ok || n <= 0 {
			t.Errorf("metrics[%s] = %v, want a positive duration", m, metrics[m])
		}
	}
	if ev["result"].(map[string]any)["outcome"] != "pass" {
		t.Errorf("result %v", ev["result"])
	}
}

// Digests correlate across processes exactly when they share a salt.
func TestDecisionLogSalt(t *testing.T) {
	digestOf := func(salt []byte) any {
		ev := logDecisions(t, Config{LogSalt: salt})[0]
		return ev["input"].(map[string]any)["request"].(map[string]any)["systemPrompt"]
	}
	salt := bytes.Repeat([]byte{7}, logSaltBytes)
	if a, b := digestOf(salt), digestOf(salt); a != b {
		t.Errorf("same salt, digests %v and %v", a, b)
	}
	if a, b := digestOf(salt), digestOf(nil); a == b {
		t.Errorf("a random salt repeated digest %v", a)
	}
}

func TestLoadLogSalt(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadLogSalt(dir)
	if err != nil || len(first) != logSaltBytes {
		t.Fatalf("LoadLogSalt = %d bytes, %v", len(first), err)
	}
	again, err := LoadLogSalt(dir)
	if err != nil || !bytes.Equal(first, again) {
		t.Errorf("second load %x, %v; want the first salt", again, err)
	}
	info, err := os.Stat(filepath.Join(dir, LogSaltFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("salt file %v, %v; want mode 0600", info, err)
	}
	if err := os.WriteFile(filepath.Join(dir, LogSaltFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLogSalt(dir); err == nil {
		t.Error("a 5-byte salt was accepted")
	}
}

// switchWriter writes to whichever writer it holds now.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// A sink that stops taking lines (here /dev/full, which answers every write
// with ENOSPC) is reported once when lines start being lost and once, with
// the count, when writing works again; deciding goes on throughout.
func TestDecisionLogReportsALosingSink(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full on this system")
	}
	defer full.Close()
	var buf bytes.Buffer
	sink := &switchWriter{w: full}
	core, logs := observer.New(zap.InfoLevel)
	d := newDecisionLog(sink, nil, false, nil, zap.New(core))
	write := func(id string) {
		d.write(Verdict{Outcome: OutcomePass, DecisionID: id}, map[string]any{}, "rev", nil, trace.SpanContext{})
	}

	for _, id := range []string{"d1", "d2", "d3"} {
		write(id)
	}
	sink.w = &buf
	write("d4")
	write("d5")

	var got []string
	for _, e := range logs.All() {
		line := e.Message
		for _, f := range e.Context {
			switch f.Key {
			case "decision_id":
				line += " id=" + f.String
			case "lines_lost":
				line += fmt.Sprintf(" lost=%d", f.Integer)
			case "error":
				if !strings.Contains(f.Interface.(error).Error(), "no space left") {
					t.Errorf("error field %v does not name the full disk", f.Interface)
				}
			}
		}
		got = append(got, line)
	}
	want := []string{
		"decision log: writing failed; decisions are still recorded in the store, their log lines are lost until writing works again id=d1",
		"decision log: writing again lost=3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("service log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 2 {
		t.Errorf("%d lines written after recovery, want 2", n)
	}
}

// The masked log still reads: what mcpx-fw, the operator and the spec's
// vocabularies put in the event stays, by JSON Pointer.
func TestDecisionLogKeepsWhatItMayShow(t *testing.T) {
	events := logDecisions(t, Config{})
	want := []struct {
		event   int
		pointer string
		value   string // as JSON
	}{
		{0, "/labels/stage", `"request"`},
		{0, "/input/version", `"mcpxfw/v1"`},
		{0, "/input/stage", `"request"`},
		{0, "/input/server/name", `"notes"`},
		{0, "/input/server/protocol", `"2025-11-25"`},
		{0, "/input/host/capabilities", `{"sampling":{"tools":{}}}`},
		{0, "/input/request/maxTokens", `100`},
		{0, "/input/request/messages/0/role", `"user"`},
		{0, "/input/request/messages/0/content/type", `"text"`},
		{0, "/input/request/messages/4/content/1/mimeType", `"image/png"`},
		{0, "/input/facts/message_count", `5`},
		{0, "/input/facts/block_types", `["image","text","tool_result","tool_use"]`},
		{0, "/input/facts/include_context", `"none"`},
		{0, "/input/facts/has_tools", `true`},
		{0, "/input/usage/hour/requests", `0`},
		{0, "/result/outcome", `"pass"`},
		{1, "/input/result/role", `"assistant"`},
		{1, "/input/result/stopReason", `"endTurn"`},
	}
	for _, w := range want {
		got, _ := json.Marshal(pointerValue(events[w.event], w.pointer))
		if string(got) != w.value {
			t.Errorf("event %d %s = %s, want %s", w.event, w.pointer, got, w.value)
		}
	}
	for _, p := range []string{"/input/request/tools/0/name", "/input/facts/tool_names/0", "/input/result/model",
		"/input/request/messages/1/content/id", "/input/request/messages/1/content/name"} {
		i := 0
		if strings.HasPrefix(p, "/input/result") {
			i = 1
		}
		if v, _ := pointerValue(events[i], p).(string); !strings.HasPrefix(v, "hmac-sha256:") {
			t.Errorf("event %d %s = %q, want a digest", i, p, v)
		}
	}
}

// pointerValue is the value at a JSON Pointer (without escapes) in doc.
func pointerValue(doc any, pointer string) any {
	for _, step := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		switch t := doc.(type) {
		case map[string]any:
			doc = t[step]
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i >= len(t) {
				return nil
			}
			doc = t[i]
		default:
			return nil
		}
	}
	return doc
}

// TestDecisionLogNamesItsTrace: a decision made inside a span (the relay's
// decision span, when tracing is on) names that trace and span in its
// event, as OPA's events do; one made outside any names none.
func TestDecisionLogNamesItsTrace(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	for _, tc := range []struct {
		name          string
		span          trace.SpanContext
		trace, spanID any
	}{
		{"in a span", sc, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
		{"outside any", trace.SpanContext{}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			e, _ := newTestEngine(t, Config{DecisionLog: &buf, Policy: PolicyConfig{Dir: "../testdata/policies/permit-all"}})
			ctx := trace.ContextWithSpanContext(t.Context(), tc.span)
			if v := e.Decide(ctx, sampling("notes", loggedParams)); v.Outcome != OutcomePass {
				t.Fatalf("decide: %v %v", v.Outcome, v.Err)
			}
			var ev map[string]any
			if err := json.Unmarshal(buf.Bytes(), &ev); err != nil {
				t.Fatalf("event: %v\n%s", err, buf.Bytes())
			}
			if ev["trace_id"] != tc.trace || ev["span_id"] != tc.spanID {
				t.Errorf("trace_id %v span_id %v, want %v %v", ev["trace_id"], ev["span_id"], tc.trace, tc.spanID)
			}
		})
	}
}
