package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/open-policy-agent/opa/v1/plugins/logs"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// logEncoder writes a decision's input and result as JSON, masking them
// as it goes, for the event (newEvent) that carries them. It writes what
// json.Marshal writes (map keys sorted, the same escaping), without first
// copying the input into a masked map and without reflection: on a chat of
// a few kilobytes that copy and json.Marshal cost as much as the policy
// decision itself. Values it has no fast path for go through json.Marshal,
// so the output is the same whatever the input holds. The envelope around
// them is OPA's logs.EventV1, marshalled by encoding/json into line.
type logEncoder struct {
	buf     []byte
	line    bytes.Buffer  // the event's line, reused as buf is
	enc     *json.Encoder // writes into line
	keys    []string      // a stack of map keys being sorted, shared by nested maps
	masking bool          // false when content is logged
	mask    masker
	fields  map[string]bool // the form's field names, which violation paths may name (schemaFields)
}

// parts appends the input and then the result to buf and returns them.
// Masking, the input is written as its kind's shape (inputShapes) allows
// and the reasons' and violations' messages are digested.
func (e *logEncoder) parts(v Verdict, input map[string]any) (in, result json.RawMessage) {
	if e.masking {
		e.masked(inputShapeOf(input), input)
	} else {
		e.value(input)
	}
	split := len(e.buf)
	e.fields = schemaFields(input)
	e.verdict(v)
	return e.buf[:split:split], e.buf[split:]
}

// errorText is err as the event shows it: masked unless content is logged.
func (e *logEncoder) errorText(err error) string {
	if e.masking {
		return e.mask.errorText(err)
	}
	return err.Error()
}

// encodeLine writes ev as one JSON line into e.line, as json.Marshal
// writes it, and returns the line.
func (e *logEncoder) encodeLine(ev *logs.EventV1) ([]byte, error) {
	e.line.Reset()
	if err := e.enc.Encode(ev); err != nil {
		return nil, err
	}
	return e.line.Bytes(), nil
}

// verdict appends v as json.Marshal writes it; masking, with the reasons'
// and violations' messages and paths masked (see maskedText).
func (e *logEncoder) verdict(v Verdict) {
	e.buf = append(e.buf, `{"outcome":`...)
	e.string(v.Outcome.String())
	e.buf = append(e.buf, `,"decision_id":`...)
	e.string(v.DecisionID)
	e.buf = append(e.buf, `,"stage":`...)
	e.string(string(v.Stage))
	e.buf = append(e.buf, `,"reasons":`...)
	e.reasons(v.Reasons)
	e.buf = append(e.buf, `,"violations":`...)
	e.violations(v.Violations)
	if len(v.Waived) > 0 {
		e.buf = append(e.buf, `,"waived":`...)
		e.reasons(v.Waived)
	}
	if v.ReviewID != "" {
		e.buf = append(e.buf, `,"review_id":`...)
		e.string(v.ReviewID)
	}
	e.buf = append(e.buf, '}')
}

func (e *logEncoder) reasons(rs []Reason) {
	if rs == nil {
		e.buf = append(e.buf, "null"...)
		return
	}
	writeList(e, rs, func(r Reason) {
		e.buf = append(e.buf, `{"code":`...)
		e.string(r.Code)
		e.buf = append(e.buf, `,"message":`...)
		e.maskedText(r.Message)
		e.buf = append(e.buf, '}')
	})
}

func (e *logEncoder) violations(vs []validate.Violation) {
	if vs == nil {
		e.buf = append(e.buf, "null"...)
		return
	}
	writeList(e, vs, func(vi validate.Violation) {
		e.buf = append(e.buf, `{"rule":`...)
		e.string(vi.Rule)
		e.buf = append(e.buf, `,"path":`...)
		e.maskedPath(vi.Path)
		e.buf = append(e.buf, `,"message":`...)
		e.maskedText(vi.Message)
		e.buf = append(e.buf, '}')
	})
}

// value appends v as it is.
func (e *logEncoder) value(v any) {
	switch t := v.(type) {
	case map[string]any:
		e.object(t)
	case []any:
		writeList(e, t, e.value)
	case string:
		e.string(t)
	case bool:
		e.buf = strconv.AppendBool(e.buf, t)
	case nil:
		e.buf = append(e.buf, "null"...)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(t), 10)
	case int64:
		e.buf = strconv.AppendInt(e.buf, t, 10)
	case json.Number:
		e.number(t)
	default:
		e.marshal(v)
	}
}

// object appends a map as it is, its keys sorted as json.Marshal orders them.
func (e *logEncoder) object(m map[string]any) { writeObject(e, m, e.value) }

// writeList appends items as a JSON array, each written by item.
func writeList[T any](e *logEncoder, items []T, item func(T)) {
	e.buf = append(e.buf, '[')
	for i, v := range items {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		item(v)
	}
	e.buf = append(e.buf, ']')
}

// writeObject appends m as a JSON object, its keys sorted as json.Marshal
// sorts them, each value written by value.
func writeObject[V any](e *logEncoder, m map[string]V, value func(V)) {
	e.buf = append(e.buf, '{')
	for i, k := range pushSortedKeys(e, m) {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.string(k)
		e.buf = append(e.buf, ':')
		value(m[k])
	}
	e.buf = append(e.buf, '}')
	e.keys = e.keys[:len(e.keys)-len(m)]
}

// pushSortedKeys pushes m's keys onto the encoder's key stack, sorted as
// json.Marshal sorts them, and returns them; the caller pops them when done,
// so nested maps share one slice instead of allocating one each.
func pushSortedKeys[V any](e *logEncoder, m map[string]V) []string {
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[start:]
	slices.Sort(keys)
	return keys
}

// string appends s quoted. Strings of plain printable ASCII, which is
// nearly all of a masked event, are copied as they are; any other string
// is quoted by json.Marshal, so escaping is exactly encoding/json's.
func (e *logEncoder) string(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			e.marshal(s)
			return
		}
	}
	e.buf = append(append(append(e.buf, '"'), s...), '"')
}

// number appends a number as validation decoded it; json.Marshal checks
// anything that does not start like one.
func (e *logEncoder) number(n json.Number) {
	if n != "" && (n[0] == '-' || '0' <= n[0] && n[0] <= '9') {
		e.buf = append(e.buf, n...)
		return
	}
	e.marshal(n)
}

// marshal appends json.Marshal(v); a value it cannot encode is logged as
// null rather than losing the whole line.
func (e *logEncoder) marshal(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte("null")
	}
	e.buf = append(e.buf, b...)
}
