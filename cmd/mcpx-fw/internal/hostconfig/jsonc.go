package hostconfig

import (
	"bytes"
	"fmt"
)

// SyntaxError is a problem with a host's file at one line, which the
// commands print as FILE:LINE.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// lineAt is the line, from 1, holding offset.
func lineAt(data []byte, offset int) int {
	return bytes.Count(data[:min(offset, len(data))], []byte("\n")) + 1
}

// blank returns a copy of data with every comment (// and /* */) and
// every trailing comma turned into spaces, newlines kept, so the copy
// reads as strict JSON and every byte stays at its offset: a span found in
// the copy is the same span of data, and a rewrite of it leaves each
// comment outside it as it was. With jsonc false, the first comment or
// trailing comma is an error naming its line.
func blank(data []byte, jsonc bool) ([]byte, error) {
	out := bytes.Clone(data)
	comma := -1 // a comma with only space and comments after it so far
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			i = stringEnd(out, i)
			comma = -1
		case c == '/' && i+1 < len(out) && (out[i+1] == '/' || out[i+1] == '*'):
			if !jsonc {
				return nil, &SyntaxError{Line: lineAt(data, i), Msg: "a comment"}
			}
			end, err := commentEnd(data, i)
			if err != nil {
				return nil, err
			}
			spaces(out[i:end])
			i = end - 1
		case c == ',':
			comma = i
		case c == '}' || c == ']':
			if comma >= 0 {
				if !jsonc {
					return nil, &SyntaxError{Line: lineAt(data, comma), Msg: "a trailing comma"}
				}
				out[comma] = ' '
			}
			comma = -1
		case c != ' ' && c != '\t' && c != '\r' && c != '\n':
			comma = -1
		}
	}
	return out, nil
}

// stringEnd is the offset of the quote closing the string opened at
// start, or the last byte when it is never closed (the JSON decoder then
// names the error).
func stringEnd(data []byte, start int) int {
	for i := start + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(data) - 1
}

// commentEnd is the offset just after the comment starting at start: the
// end of its line (the newline stays), or its closing */.
func commentEnd(data []byte, start int) (int, error) {
	if data[start+1] == '/' {
		if n := bytes.IndexByte(data[start:], '\n'); n >= 0 {
			return start + n, nil
		}
		return len(data), nil
	}
	if n := bytes.Index(data[start+2:], []byte("*/")); n >= 0 {
		return start + 2 + n + 2, nil
	}
	return 0, &SyntaxError{Line: lineAt(data, start), Msg: "a /* comment that is never closed"}
}

// spaces turns every byte of b but a line break into a space.
func spaces(b []byte) {
	for i, c := range b {
		if c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
}
