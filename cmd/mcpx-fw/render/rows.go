package render

import (
	"bytes"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// A terminal wraps a line longer than its width on its own, and the part
// past the edge starts the next row at column 0: an upstream's line of
// prose padded with spaces could put "To decide … mcpx-fw review approve"
// there, outside the gutter, and pass for show's own layout. So what a
// person reads is cut into rows before it is printed, none wider than the
// screen, and every row a line runs on to starts with the line's own
// indentation and ContMark: no character of the line ever reaches the
// start of a row that is not the line's own start. Long runs of spaces are
// cut like anything else, so padding cannot move text to a row's start.

// ContMark starts every row that continues a line cut at the screen's
// width, under the line's indentation. show's own lines never start with
// it, and it reads as the gutter (│) going on.
const ContMark = "┆"

const (
	// DefaultWidth is the width laid out for when the output is no
	// terminal and none was asked for.
	DefaultWidth = 100
	// MinWidth is the narrowest layout cut for: enough for an
	// indentation, the mark and a few characters on every row.
	MinWidth = 10
	// Uncut is the width of a layout that cuts no line: output no
	// terminal will show (ForTable).
	Uncut = math.MaxInt32
)

// Layout is what text is laid out for: how many columns a row holds, and
// whether East Asian ambiguous-width characters (Greek, Cyrillic, box
// drawing, many symbols) take two of them, as terminals in Chinese,
// Japanese and Korean locales may draw them. The zero Layout is
// DefaultWidth columns wide.
type Layout struct {
	Width         int
	WideAmbiguous bool
}

// cols is the layout's width in columns.
func (s Layout) cols() int {
	if s.Width == 0 {
		return DefaultWidth
	}
	return max(s.Width, MinWidth)
}

// columns is how many columns s takes on the screen. It never counts
// fewer than a terminal draws: an undercount would let a row run past the
// edge, which is the very thing the rows are cut for.
func (s Layout) columns(str string) int {
	n := 0
	for _, r := range str {
		n += s.runeColumns(r)
	}
	return n
}

// runeColumns is the columns a character takes (after inert, so never a
// control or an invisible one): none for a combining mark, which draws on
// the character before it; two for East Asian wide and fullwidth
// characters (UAX #11, from golang.org/x/text/width) and for regional
// indicators (a pair draws one wide flag, and some terminals give each
// one two columns); two for ambiguous ones on a layout that says so; else
// one.
func (s Layout) runeColumns(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		return 1
	case inert.Mark(r):
		return 0
	case 0x1f1e6 <= r && r <= 0x1f1ff:
		return 2
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	case width.EastAsianAmbiguous:
		if s.WideAmbiguous {
			return 2
		}
	}
	return 1
}

// wrap cuts one line (without its newline) into rows no wider than the
// screen. The first row starts as the line does; each further row starts
// with the line's indentation (capped at half the screen, so every row
// has room) and ContMark, then the line goes on. A row ends after its
// last space when that leaves it at least half full, else where the next
// character would not fit; nothing of the line is dropped or changed, so
// the rows read in order are the line. A character and the marks on it,
// and an escape inert wrote (\u202e), are never cut apart unless a row
// cannot hold them whole.
func (s Layout) wrap(line string) []string {
	width := s.cols()
	if s.columns(line) <= width {
		return []string{line}
	}
	indent := len(line) - len(strings.TrimLeft(line, " "))
	mark := s.columns(ContMark + " ")
	cont := strings.Repeat(" ", max(0, min(indent, width/2-mark))) + ContMark + " "
	var rows []string
	prefix, from := "", 0 // the row's prefix, and where its part of line starts
	used, room := 0, width
	brk := -1 // where the row may end: after a space, half full
	for i := 0; i < len(line); {
		n, cols := s.unit(line[i:])
		if used+cols > room {
			if i > from {
				end := i
				if brk > from {
					end = brk
				}
				rows = append(rows, prefix+line[from:end])
				prefix, from, i, used, room, brk = cont, end, end, 0, width-s.columns(cont), -1
				continue
			}
			_, n = utf8.DecodeRuneInString(line[i:]) // a unit wider than a row: one character at a time
			cols = s.columns(line[i : i+n])
		}
		i += n
		used += cols
		if c := line[i-1]; (c == ' ' || c == ',') && i > indent && 2*used >= room {
			brk = i
		}
	}
	return append(rows, prefix+line[from:])
}

// unit is the length in bytes and the width in columns of what starts s
// and must not be cut: an escape as inert writes it (\\, \", \t, \n, \r,
// \xNN, \uNNNN, \UNNNNNNNN), or a character with the combining marks on
// it.
func (s Layout) unit(str string) (int, int) {
	if n := escapeLen(str); n > 0 {
		return n, n
	}
	r, n := utf8.DecodeRuneInString(str)
	cols := s.runeColumns(r)
	for n < len(str) {
		m, size := utf8.DecodeRuneInString(str[n:])
		if !inert.Mark(m) {
			break
		}
		n += size
	}
	return n, cols
}

// escapeLen is the length of the escape s starts with, 0 if none.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != '\\' {
		return 0
	}
	n := 0
	switch s[1] {
	case '\\', '"', 't', 'n', 'r':
		return 2
	case 'x':
		n = 4
	case 'u':
		n = 6
	case 'U':
		n = 10
	}
	if n == 0 || len(s) < n {
		return 0
	}
	for i := 2; i < n; i++ {
		if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return 0
		}
	}
	return n
}

// RowWriter lays every line written through it out in rows of its layout
// (see wrap) as the line is complete; Flush writes a last line that has
// no newline. whole writes a line uncut: for the commands an operator
// copies, which hold only the firewall's own words, the store's id and the
// operator's config path, and must stay one line to be copied whole.
type RowWriter struct {
	w    io.Writer
	s    Layout
	line []byte
}

// Rows returns a writer that lays out for s what it writes to w.
func (s Layout) Rows(w io.Writer) *RowWriter { return &RowWriter{w: w, s: s} }

func (rw *RowWriter) Write(p []byte) (int, error) {
	n := len(p)
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			rw.line = append(rw.line, p...)
			return n, nil
		}
		rw.line = append(rw.line, p[:i]...)
		if err := rw.writeLine("\n"); err != nil {
			return 0, err
		}
		p = p[i+1:]
	}
}

// Flush writes the line written so far, when it has no newline yet.
func (rw *RowWriter) Flush() error {
	if len(rw.line) == 0 {
		return nil
	}
	return rw.writeLine("")
}

// whole writes s (whole lines) as it is, after what was written before.
func (rw *RowWriter) whole(s string) error {
	if err := rw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(rw.w, s)
	return err
}

func (rw *RowWriter) writeLine(end string) error {
	rows := rw.s.wrap(string(rw.line))
	rw.line = rw.line[:0]
	_, err := io.WriteString(rw.w, strings.Join(rows, "\n")+end)
	return err
}
