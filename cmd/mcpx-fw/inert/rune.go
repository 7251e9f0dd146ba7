package inert

import (
	"unicode"
	"unicode/utf8"
)

// Shown reports whether r may reach a reader as it is: a graphic character
// (categories L, M, N, P, S and Zs) that is not default-ignorable. Controls
// (newline too: whether a text keeps its lines is the caller's choice),
// format characters, variation selectors, the other default-ignorable code
// points, line and paragraph separators, private-use, surrogate and
// unassigned code points are not.
func Shown(r rune) bool {
	if r < utf8.RuneSelf {
		return 0x20 <= r && r < 0x7f
	}
	return unicode.IsGraphic(r) && !unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

const hexDigits = "0123456789abcdef"

// appendEscape appends the escape that stands for r: \t, \n and \r by
// name, \xNN below U+0080, else \uNNNN or \UNNNNNNNN.
func appendEscape(b []byte, r rune) []byte {
	switch {
	case r == '\t':
		return append(b, `\t`...)
	case r == '\n':
		return append(b, `\n`...)
	case r == '\r':
		return append(b, `\r`...)
	case r < utf8.RuneSelf:
		return appendHex(append(b, `\x`...), uint32(r), 2)
	case r <= 0xffff:
		return appendHex(append(b, `\u`...), uint32(r), 4)
	}
	return appendHex(append(b, `\U`...), uint32(r), 8)
}

// appendBadByte appends the escape for a byte that is not UTF-8 (always
// 0x80 or above, so never confused with a control's \xNN).
func appendBadByte(b []byte, c byte) []byte {
	return appendHex(append(b, `\x`...), uint32(c), 2)
}

func appendHex(b []byte, v uint32, digits int) []byte {
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b = append(b, hexDigits[v>>shift&0xf])
	}
	return b
}
