package rendertest

import (
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// contMark is render.ContMark, the mark starting every row that goes on a
// line. It is written here again because render's own tests import this
// package, which therefore cannot import render.
const contMark = "┆"

// TermColumns counts the columns a terminal gives s, from the Unicode
// tables rather than from render.Layout: East Asian wide and fullwidth
// characters (and ambiguous ones when wideAmbiguous) take two, combining
// marks none, everything else one.
func TermColumns(s string, wideAmbiguous bool) int {
	n := 0
	for _, r := range s {
		switch k := width.LookupRune(r).Kind(); {
		case unicode.In(r, unicode.Mn, unicode.Me):
		case k == width.EastAsianWide || k == width.EastAsianFullwidth || k == width.EastAsianAmbiguous && wideAmbiguous:
			n += 2
		default:
			n++
		}
	}
	return n
}

// TermRows is what a terminal cols columns wide shows of out: each line
// wrapped by the terminal itself where it reaches the edge (a wide
// character that does not fit goes to the next row whole).
func TermRows(out string, cols int) []string {
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		row, used := "", 0
		for _, r := range line {
			w := TermColumns(string(r), false)
			if used+w > cols {
				rows, row, used = append(rows, row), "", 0
			}
			row += string(r)
			used += w
		}
		rows = append(rows, row)
	}
	return rows
}

// JoinRows undoes the cutting of lines into rows: each row that goes on
// a line (indentation, the mark, a space) is joined to the row before.
func JoinRows(out string) string {
	var b strings.Builder
	for i, row := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimLeft(row, " "), contMark+" "); ok && i > 0 {
			b.WriteString(rest)
			continue
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(row)
	}
	return b.String()
}
