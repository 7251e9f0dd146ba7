package inert

import (
	"strings"
	"unicode/utf8"
)

// form is what one way of showing text escapes besides what Shown refuses.
type form struct {
	lines bool // newline is kept, so the text shows as lines
	quote bool // '"' is escaped: the text goes between quotes
	slash bool // '\' is escaped: every form but the sink's
}

var (
	textForm  = form{lines: true, slash: true}
	lineForm  = form{slash: true}
	quoteForm = form{quote: true, slash: true}
	sinkForm  = form{lines: true}
)

// Text returns s for reading as lines: newlines are kept, everything else
// Shown refuses, each combining mark past MaxMarks in a row and each
// backslash are escaped.
func Text(s string) string { return textForm.string(s) }

// Line returns s for reading on one line: as Text, with newline escaped
// too, so nothing s holds can start a line of its own.
func Line(s string) string { return lineForm.string(s) }

// Folded returns a multi-line message (OPA's compile errors quote the
// source line and a caret under it) as Line would show it once its lines
// are joined with "; " and its runs of spaces and tabs made one space.
func Folded(s string) string {
	return Line(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " "))
}

// Quote returns s as a quoted string value: Line between double quotes,
// with the quotes inside escaped, so its bounds show (an empty string or
// trailing spaces too).
func Quote(s string) string {
	b := append(make([]byte, 0, len(s)+2), '"')
	return string(append(quoteForm.append(b, s), '"'))
}

// Word returns an id or a name as it is when it is a plain token (ASCII
// letters, digits and - _ . : / @ +), else quoted, so a name cannot pass
// for the punctuation around it ("lookup id=x]" reads as one quoted name).
func Word(s string) string {
	if s == "" {
		return `""`
	}
	for i := 0; i < len(s); i++ {
		if !plain(s[i]) {
			return Quote(s)
		}
	}
	return s
}

func plain(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', ':', '/', '@', '+':
		return true
	}
	return false
}

// string is f applied to s; s itself when nothing needs escaping.
func (f form) string(s string) string {
	if f.clean(s) {
		return s
	}
	return string(f.append(make([]byte, 0, len(s)+16), s))
}

// clean reports whether f leaves s as it is.
func (f form) clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || f.escapes(c) {
			return f.cleanFrom(s, i)
		}
	}
	return true
}

func (f form) cleanFrom(s string, i int) bool {
	var run marks
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r < utf8.RuneSelf && f.escapes(byte(r)), r >= utf8.RuneSelf && !Shown(r), r == utf8.RuneError && n == 1, !run.pass(r):
			return false
		}
		i += n
	}
	return true
}

// escapes reports whether f escapes the ASCII character c.
func (f form) escapes(c byte) bool {
	switch c {
	case '\\':
		return f.slash
	case '"':
		return f.quote
	case '\n':
		return !f.lines
	}
	return !Shown(rune(c))
}

// append appends s to b as f shows it.
func (f form) append(b []byte, s string) []byte {
	var run marks
	return f.appendRun(b, s, &run)
}

// appendRun is append continuing a run of combining marks that the text
// before s ended with (the sink's writes follow one another on screen).
func (f form) appendRun(b []byte, s string, run *marks) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = f.appendASCII(b, c)
			*run = 0
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = appendBadByte(b, c)
			*run = 0
		case !Shown(r):
			b = appendEscape(b, r)
			*run = 0
		case run.pass(r):
			b = append(b, s[i:i+n]...)
		default:
			b = appendEscape(b, r)
		}
		i += n
	}
	return b
}

func (f form) appendASCII(b []byte, c byte) []byte {
	switch {
	case !f.escapes(c):
		return append(b, c)
	case c == '\\' || c == '"':
		return append(b, '\\', c)
	}
	return appendEscape(b, rune(c))
}

// Clean reports whether s holds only characters Shown lets pass and
// newlines, with no more than MaxMarks combining marks in a row: what the
// sink writes unchanged. A format that cannot escape in place (a YAML
// literal block) uses it to choose a quoted form.
func Clean(s string) bool { return sinkForm.clean(s) }
