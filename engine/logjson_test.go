package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// marshalledEvent is the decision-log event as json.Marshal wrote it before
// logEncoder: the reference the encoder's lines must equal byte for byte.
type marshalledEvent struct {
	DecisionID string            `json:"decision_id"`
	Path       string            `json:"path"`
	Input      any               `json:"input"`
	Result     any               `json:"result"`
	Timestamp  time.Time         `json:"timestamp"`
	Labels     map[string]string `json:"labels"`
	Metrics    map[string]int64  `json:"metrics,omitempty"`
	Masked     []string          `json:"masked,omitempty"`
	Error      string            `json:"error,omitempty"`
}

// maskedCopy is the input with every value under a text key replaced by
// the masker's digest, built as a copy.
func maskedCopy(m *masker, v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if textKeys[k] {
				out[k] = m.digestValue(val)
			} else {
				out[k] = maskedCopy(m, val)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = maskedCopy(m, val)
		}
		return out
	}
	return v
}

var logTimestamp = regexp.MustCompile(`"timestamp":"[^"]*"`)

// The encoder writes what json.Marshal wrote for the same event, masked
// and not, for every golden input and for values only the fallback path
// handles (escapes, non-ASCII, floats, a struct).
func TestLogEncoderMatchesJSONMarshal(t *testing.T) {
	e, _ := newTestEngine(t, Config{})
	inputs := map[string]map[string]any{}
	for _, c := range inputCases {
		_, doc := goldenInput(t, e, c)
		inputs[c.name] = decodePolicyJSON(t, string(doc))
	}
	inputs["odd values"] = map[string]any{
		"request": map[string]any{"systemPrompt": "<b>&</b>", "temperature": 0.7, "messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "é \u2028 \"q\" \\ \n\x01"}},
			map[string]any{"role": "assistant", "content": map[string]any{"type": "tool_use", "input": map[string]any{"a": []any{1.5e300, "x"}}}},
		}},
		"server":  map[string]any{"name": "tëst <x>", "label": "a\tb", "reported": map[string]any{"n": json.Number("12"), "big": int64(1) << 60, "f": false}},
		"origin":  validate.Violation{Rule: "r", Path: "/p", Message: "m"},
		"nothing": nil,
	}
	verdicts := []Verdict{
		{Outcome: OutcomePass, DecisionID: "dc-1", Stage: StageRequest, Reasons: []Reason{}},
		{Outcome: OutcomeError, DecisionID: "dc-2", Stage: StageResult, Err: errors.New(`policy "x" <failed>`),
			Reasons: []Reason{{Code: "policy-error", Message: "policy evaluation failed"}}},
	}
	metrics := []map[string]int64{nil, {"timer_rego_query_eval_ns": 12, "timer_validate_ns": 3}}
	for name, input := range inputs {
		for i, v := range verdicts {
			for _, content := range []bool{false, true} {
				d := newDecisionLog(nil, content, bytes.Repeat([]byte{1}, logSaltBytes), nil)
				enc := d.encoder()
				if err := enc.event(v, input, "abc123", metrics[i]); err != nil {
					t.Fatal(err)
				}
				got := logTimestamp.ReplaceAllString(string(enc.buf), `"timestamp":"T"`)
				d.release(enc)
				want := marshalledEvent{DecisionID: v.DecisionID, Path: decisionPath, Input: input, Result: v,
					Labels: map[string]string{"policy_revision": "abc123", "stage": string(v.Stage)}, Metrics: metrics[i]}
				if v.Err != nil {
					want.Error = v.Err.Error()
				}
				if !content {
					m := &masker{}
					m.reset(&d.macs)
					want.Input, want.Masked = maskedCopy(m, input), maskedPaths
				}
				line, err := json.Marshal(want)
				if err != nil {
					t.Fatal(err)
				}
				wantLine := logTimestamp.ReplaceAllString(string(line)+"\n", `"timestamp":"T"`)
				if got != wantLine {
					t.Errorf("%s, verdict %d, content %v:\n got %s\nwant %s", name, i, content, got, wantLine)
				}
			}
		}
	}
}
