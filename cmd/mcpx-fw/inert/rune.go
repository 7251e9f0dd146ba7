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

// MaxMarks is how many combining marks in a row may follow a character as
// they are; the next ones in the same run are escaped (\u0301). Marks
// stack: a character carrying dozens of them ("Zalgo" text) draws over
// the lines above and below it, in a terminal and in a browser alike, and
// can cover what show printed there. Three is what real writing needs on
// one character: Vietnamese decomposed carries two (ệ is e, U+0323,
// U+0302), Thai and Lao a vowel and a tone mark, Devanagari and the other
// Indic scripts a nukta, a vowel sign and a nasal mark, pointed Hebrew a
// dagesh, a vowel and a shin dot, a Tibetan stack two subjoined letters
// and a vowel. Beyond that only liturgical texts go (Hebrew cantillation,
// Sanskrit in Tibetan script), and there the fourth mark shows escaped,
// still readable and still exactly what was sent.
const MaxMarks = 3

// Mark reports whether r is a combining mark that stacks on the character
// before it instead of taking a place of its own: a nonspacing (Mn) or
// enclosing (Me) mark. Spacing marks (Mc) advance like letters and cannot
// pile up.
func Mark(r rune) bool {
	return r >= 0x300 && unicode.In(r, unicode.Mn, unicode.Me)
}

// marks counts the combining marks in a row that a form has let through
// as they are; any other character ends the run.
type marks int

// pass reports whether r may be written as it is, given the run so far,
// and advances the run: a character that is no mark starts a new run, a
// mark passes while the run holds fewer than MaxMarks.
func (m *marks) pass(r rune) bool {
	if !Mark(r) {
		*m = 0
		return true
	}
	if *m >= MaxMarks {
		return false
	}
	*m++
	return true
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
