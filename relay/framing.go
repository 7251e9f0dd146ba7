package relay

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The framing rule: every message written toward a host over stdio, and
// toward a stdio upstream, is one line of compact JSON: the message, then
// one '\n', and nothing in between that a line reader ends a line at.
// MCP's stdio transport is newline-delimited and its readers split on
// '\n' (the TypeScript SDK's ReadBuffer, the Python SDK's split("\n"));
// other readers also end lines at '\r', or, reading text, at U+0085,
// U+2028 and U+2029 (Python's str.splitlines, JavaScript's line
// terminators). A message holding one of those reaches such a reader as
// several lines, each read as a message of its own: an upstream's answer
// relayed as written would bring the host requests and answers to other
// calls that no policy saw.
//
// The rule is enforced where the bytes leave, whatever made them (the
// SDK's encoder, the frame path, any path added later): in hostWriter for
// a host's stdio stream, in childStdin for an upstream's stdin. In valid
// JSON a raw '\n' or '\r' can only be whitespace between tokens, and
// U+0085, U+2028 and U+2029 can only be inside strings, so compacting the
// first and escaping the others changes no value and no member order.
// Streamable HTTP has the same rule for event streams (oneLineEvents).

// errFraming refuses a write that is not one JSON message and its '\n'.
var errFraming = errors.New("not one JSON message on one line")

// oneLine is frame as the framing rule lets it be written: frame itself,
// not copied, when it is an object or array whose one line end is its
// final '\n' (checked without parsing: a frame with no other line end
// reaches a line reader as one line, whatever it holds); else, when frame
// is one JSON object or array and its '\n', a compacted copy with U+0085,
// U+2028 and U+2029 escaped; else errFraming, and nothing of it may be
// written.
func oneLine(frame []byte) ([]byte, error) {
	body, ok := bytes.CutSuffix(frame, []byte{'\n'})
	if !ok || len(body) == 0 {
		return nil, errFraming
	}
	if !breaksLine(body) {
		return frame, nil
	}
	var b bytes.Buffer
	b.Grow(len(frame) + 16)
	if json.Compact(&b, body) != nil || (b.Bytes()[0] != '{' && b.Bytes()[0] != '[') {
		return nil, errFraming
	}
	return append(escapeSeparators(b.Bytes()), '\n'), nil
}

// breaksLine reports whether body, a frame without its final '\n', may
// not be written as it is: it holds a line end, or does not start and end
// as an object or array does (whitespace around it, or no JSON at all).
func breaksLine(body []byte) bool {
	first, last := body[0], body[len(body)-1]
	if (first != '{' && first != '[') || (last != '}' && last != ']') ||
		bytes.IndexByte(body, '\n') >= 0 || bytes.IndexByte(body, '\r') >= 0 {
		return true
	}
	return hasSeparator(body, 0xE2) || hasSeparator(body, 0xC2)
}

// hasSeparator reports whether b holds U+2028 or U+2029 (lead 0xE2) or
// U+0085 (lead 0xC2). It skips from lead byte to lead byte: most text has
// none, and typographic text (quotes, dashes, E2 80 xx) many, which a
// search for the whole sequence would test byte by byte.
func hasSeparator(b []byte, lead byte) bool {
	for {
		i := bytes.IndexByte(b, lead)
		if i < 0 {
			return false
		}
		b = b[i+1:]
		switch {
		case lead == 0xC2 && len(b) > 0 && b[0] == 0x85:
			return true
		case lead == 0xE2 && len(b) > 1 && b[0] == 0x80 && (b[1] == 0xA8 || b[1] == 0xA9):
			return true
		}
	}
}

// separators are the line ends valid JSON can hold raw, in strings only,
// with the escapes that stand for them.
var separators = []struct{ raw, escaped []byte }{
	{[]byte("\u0085"), []byte(`\u0085`)},
	{[]byte("\u2028"), []byte(`\u2028`)},
	{[]byte("\u2029"), []byte(`\u2029`)},
}

// escapeSeparators escapes every U+0085, U+2028 and U+2029 in compact, a
// valid JSON value, where they can only be inside strings.
func escapeSeparators(compact []byte) []byte {
	for _, s := range separators {
		if bytes.Contains(compact, s.raw) {
			compact = bytes.ReplaceAll(compact, s.raw, s.escaped)
		}
	}
	return compact
}
