// Package rendertest holds what the tests of the renderer and of the CLI
// that prints with it share: a check that output holds nothing a terminal
// could obey, a model of how a terminal draws and wraps rows, and review
// items as the firewall stores them. It is written from the Unicode tables
// and the store's types, not from package render (which it cannot import:
// render's own tests import it), so that it checks render rather than
// repeating it.
package rendertest

import (
	"fmt"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// Obeyable returns a description of the first character of s that a
// terminal could obey or a reader could not see, or "" when there is
// none: invalid UTF-8, a control other than newline (tab included), a
// format character (bidi controls, zero-width characters, tags), a
// variation selector or other default-ignorable code point, a line or
// paragraph separator, a private-use or unassigned code point; or a
// combining mark (Mn, Me) past inert.MaxMarks in a row, which would draw
// over the lines around it. It is written from the Unicode tables, not
// from package inert, so that it checks inert rather than repeating it.
func Obeyable(s string) string {
	marks := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if marks = marks + 1; !unicode.In(r, unicode.Mn, unicode.Me) {
			marks = 0
		}
		switch {
		case marks > inert.MaxMarks:
			return fmt.Sprintf("%d combining marks in a row at %d", marks, i)
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("invalid UTF-8 byte %#x at %d", s[i], i)
		case r == '\n':
		case unicode.IsControl(r), unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Variation_Selector,
			unicode.Other_Default_Ignorable_Code_Point), !unicode.IsGraphic(r):
			return fmt.Sprintf("%U at %d", r, i)
		}
		i += n
	}
	return ""
}

// CheckInert fails t when out holds anything obeyable.
func CheckInert(t testing.TB, what, out string) {
	t.Helper()
	if bad := Obeyable(out); bad != "" {
		t.Errorf("%s prints %s as it is:\n%.2000s", what, bad, out)
	}
}
