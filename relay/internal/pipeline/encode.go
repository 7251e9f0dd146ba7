package pipeline

import (
	"bytes"
	"encoding/json"
)

// encode is json.Marshal without HTML escaping: the bytes the engine
// judges (and measures against limits.max_bytes) must not grow six-fold
// for every '<' an upstream sends. The SDK's types marshal their parts
// with json.Marshal, which escapes, so the escapes are undone after.
func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return unescapeHTML(b), nil
}

// unescapeHTML turns encoding/json's \u003c, \u003e and \u0026 back into
// the characters. Every other escape is copied whole, so the backslash of
// an escaped backslash never starts a false match.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if c, ok := htmlEscapes[string(b[i+1:min(i+6, len(b))])]; ok {
			out, i = append(out, c), i+5
			continue
		}
		out, i = append(out, b[i], b[i+1]), i+1
	}
	return out
}

var htmlEscapes = map[string]byte{"u003c": '<', "u003e": '>', "u0026": '&'}
