package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/plugins/logs"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// referenceEvent is the event as OPA's own type marshals it with the
// input and result as Go values: the reference the encoder's lines, which
// carry them as raw JSON, must equal byte for byte.
func referenceEvent(v Verdict, input any, revision string, metrics map[string]any, masked []string, errText string) logs.EventV1 {
	var in, result any = input, v
	ev := logs.EventV1{
		Labels:     map[string]string{"policy_revision": revision, "stage": string(v.Stage)},
		DecisionID: v.DecisionID, Path: decisionPath, Input: &in, Result: &result, Masked: masked,
		Bundles: map[string]logs.BundleInfoV1{BundleName: {Revision: revision}},
		Metrics: metrics,
	}
	if v.Err != nil {
		ev.Error = &eventError{Code: codeInternal, Message: errText}
	}
	return ev
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// maskedCopy is v as shape s lets the masked log show it, built as a copy.
func maskedCopy(m *masker, s *shape, v any) any {
	if v == nil || v == "" {
		return v
	}
	if obj, ok := v.(map[string]any); ok && len(obj) == 0 {
		return v
	}
	if l, ok := v.([]any); ok && len(l) == 0 {
		return v
	}
	if out, ok := maskedCopyAs(m, s, v); ok {
		return out
	}
	return m.digestValue(v)
}

func maskedCopyAs(m *masker, s *shape, v any) (any, bool) {
	switch s.kind {
	case asIs:
		return v, true
	case number:
		switch n := v.(type) {
		case json.Number:
			return v, len(n) <= maxKeptNumber
		case int, int64, float64:
			return v, true
		}
		return nil, false
	case boolean:
		_, ok := v.(bool)
		return v, ok
	case oneOf, revision:
		w, ok := v.(string)
		return v, ok && (s.words[w] || s.kind == revision && isRevision(w))
	case object, table, keyed:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		out := map[string]any{}
		for k, val := range obj {
			switch f := s.fields[k]; {
			case s.kind == table:
				out[k] = maskedCopy(m, s.elem, val)
			case f == nil:
				out[m.digestText(k)] = maskedCopy(m, s.stranger(), val)
			default:
				out[k] = maskedCopy(m, f, val)
			}
		}
		return out, true
	case list:
		l, ok := v.([]any)
		if !ok {
			return nil, false
		}
		out := make([]any, len(l))
		for i, val := range l {
			out[i] = maskedCopy(m, s.elem, val)
		}
		return out, true
	case content:
		if out, ok := maskedCopyAs(m, s.elem, v); ok {
			return out, true
		}
		return maskedCopyAs(m, listOf(s.elem), v)
	}
	return nil, false
}

// maskedVerdictCopy is v with its messages, and the paths that name more
// than places (in input's form, see placePath), digested.
func maskedVerdictCopy(m *masker, v Verdict, input map[string]any) Verdict {
	v.Reasons = slices.Clone(v.Reasons)
	for i := range v.Reasons {
		v.Reasons[i].Message = m.digestText(v.Reasons[i].Message)
	}
	v.Waived = slices.Clone(v.Waived)
	for i := range v.Waived {
		v.Waived[i].Message = m.digestText(v.Waived[i].Message)
	}
	v.Violations = slices.Clone(v.Violations)
	for i, vi := range v.Violations {
		v.Violations[i].Message = m.digestText(vi.Message)
		if !placePath(vi.Path, schemaFields(input)) {
			v.Violations[i].Path = m.digestText(vi.Path)
		}
	}
	return v
}

var logTimestamp = regexp.MustCompile(`"timestamp":"[^"]*"`)

// The encoder writes what json.Marshal writes for OPA's EventV1 holding
// the same event, masked and not, for every golden input and for values
// only the fallback path handles (escapes, non-ASCII, floats, a struct,
// members the input does not define).
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
		"facts":   map[string]any{"zz": "unknown member", "block_types": []any{"text", "mine"}, "has_tools": "yes"},
	}
	verdicts := []Verdict{
		{Outcome: OutcomePass, DecisionID: "dc-1", Stage: StageRequest, Reasons: []Reason{}},
		{Outcome: OutcomeError, DecisionID: "dc-2", Stage: StageResult, Err: errors.New(`policy "x" <failed>`),
			Reasons: []Reason{{Code: "policy-error", Message: "policy evaluation failed"}}},
		{Outcome: OutcomeBlocker, DecisionID: "dc-3", Stage: StageRequest, ReviewID: "rv-1", Violations: []validate.Violation{
			{Rule: "SMP-02.role", Path: "/messages/0/role", Message: `role must be "user" or "assistant", got "x"`},
			{Rule: "SMP-10.unknown-key", Path: "/messages/0/sneaky", Message: "unknown member"}}},
		{Outcome: OutcomePass, DecisionID: "dc-4", Stage: StageResult, Reasons: []Reason{},
			Waived: []Reason{{Code: "secret-in-completion", Message: "the completion contains something shaped like a secret"}}},
	}
	metrics := []map[string]any{nil, {"timer_rego_query_eval_ns": int64(12), "timer_validate_ns": int64(3)}, nil, nil}
	for name, input := range inputs {
		for i, v := range verdicts {
			for _, content := range []bool{false, true} {
				d := newDecisionLog(nil, nil, content, bytes.Repeat([]byte{1}, logSaltBytes), nil)
				enc := d.encoder()
				in, res := enc.parts(v, input)
				ev := newEvent(v, newEnvelope("abc123"), in, res, enc.masking, newEventError(v.Err, enc.errorText), metrics[i])
				line, err := enc.encodeLine(&ev)
				if err != nil {
					t.Fatal(err)
				}
				got := logTimestamp.ReplaceAllString(string(line), `"timestamp":"T"`)
				d.release(enc)
				want := referenceEvent(v, input, "abc123", metrics[i], nil, errText(v.Err))
				if !content {
					m := &masker{}
					m.reset(&d.macs)
					want = referenceEvent(maskedVerdictCopy(m, v, input), maskedCopy(m, inputShapeOf(input), input), "abc123", metrics[i], maskedPaths, "")
					if v.Err != nil {
						want.Error = &eventError{Code: codeInternal, Message: m.errorText(v.Err)}
					}
				}
				ref, err := json.Marshal(want)
				if err != nil {
					t.Fatal(err)
				}
				wantLine := logTimestamp.ReplaceAllString(string(ref)+"\n", `"timestamp":"T"`)
				if got != wantLine {
					t.Errorf("%s, verdict %d, content %v:\n got %s\nwant %s", name, i, content, got, wantLine)
				}
			}
		}
	}
}
