package inert

import "unicode/utf8"

// JSON returns encoded JSON (as encoding/json writes it) with every
// character inside its strings that Shown refuses, and every combining
// mark past MaxMarks in a row, written as a \uXXXX escape (a surrogate
// pair above U+FFFF), and each byte that is not UTF-8 as \ufffd, which is
// what a decoder makes of it. encoding/json already escapes C0 controls,
// but not DEL, C1 controls, bidi or other format characters, nor marks;
// after JSON the document is still valid JSON with the same value, and
// printing it with cat is inert.
func JSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	in := false // inside a string
	var run marks
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case !in:
			out, in = append(out, c), c == '"'
		case c == '\\' && i+1 < len(b):
			out = append(out, c, b[i+1])
			i++
		case c == '"':
			out, in = append(out, c), false
		case c < utf8.RuneSelf:
			out = appendJSONRune(out, rune(c), &run)
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				out, run = append(out, `\ufffd`...), 0
			} else {
				out = appendJSONRune(out, r, &run)
			}
			i += n - 1
		}
		if c == '\\' || c == '"' {
			run = 0
		}
		i++
	}
	return out
}

// appendJSONRune appends r as it may stand inside a JSON string: as it is
// when Shown and not a mark past the run's limit, else as \uXXXX (a
// surrogate pair above U+FFFF).
func appendJSONRune(b []byte, r rune, run *marks) []byte {
	if !Shown(r) {
		*run = 0
	} else if run.pass(r) {
		return utf8.AppendRune(b, r)
	}
	if r > 0xffff {
		r -= 0x10000
		b = appendHex(append(b, `\u`...), uint32(0xd800+r>>10), 4)
		return appendHex(append(b, `\u`...), uint32(0xdc00+r&0x3ff), 4)
	}
	return appendHex(append(b, `\u`...), uint32(r), 4)
}
