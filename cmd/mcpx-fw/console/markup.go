package console

import (
	"html"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// markup is a page being written. The pages are Go code rather than
// html/template: a binary that can run a template keeps every exported
// method of every type it links (a template may call any of them by name),
// which made serve's binary, resident in every serve, megabytes larger.
// The rule html/template enforced holds here by construction: markup is
// written only by raw, from this package's constants, and every value
// goes through esc, which escapes it for text and for a quoted attribute
// alike; each string that may hold upstream text goes through one of
// inert's forms first (text, line, word, sink), so escaping keeps markup
// out and inert keeps out what a browser would still obey or hide (bidi
// overrides that reorder a line, zero-width and control characters).
type markup struct{ b strings.Builder }

// raw writes the page's own markup.
func (m *markup) raw(s string) { m.b.WriteString(s) }

// esc writes s as text, safe in an element's content and in a
// double-quoted attribute value.
func (m *markup) esc(s string) { m.b.WriteString(html.EscapeString(s)) }

// text writes multi-line prose: newlines and tabs kept.
func (m *markup) text(s string) { m.esc(inert.Text(s)) }

// line writes one line of upstream text.
func (m *markup) line(s string) { m.esc(inert.Line(s)) }

// word writes an id or a code.
func (m *markup) word(s string) { m.esc(inert.Word(s)) }

// sink writes text the CLI's renderer already laid out (sink).
func (m *markup) sink(s string) { m.esc(sink(s)) }

// int writes a number.
func (m *markup) int(n int64) { m.b.WriteString(strconv.FormatInt(n, 10)) }

// when writes t as a local date and time.
func (m *markup) when(t time.Time) { m.esc(t.Local().Format(time.DateTime)) }

// left writes how long until t (timeLeft).
func (m *markup) left(t time.Time) { m.esc(timeLeft(t)) }

// reviewPath writes the path of review id's page, with suffix (an
// action's path) after it.
func (m *markup) reviewPath(id, suffix string) {
	m.esc("/review/" + url.PathEscape(id) + suffix)
}

// String is the page.
func (m *markup) String() string { return m.b.String() }
