package console

import (
	"html/template"
	"strings"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// funcs are the templates' helpers. Each string that may hold upstream
// text goes through one of inert's forms before html/template escapes it:
// escaping keeps markup out, inert keeps out what a browser would still
// obey or hide (bidi overrides that reorder a line, zero-width and control
// characters), showing each as an escape instead.
var funcs = template.FuncMap{
	"text": inert.Text, // multi-line prose: newlines and tabs kept
	"line": inert.Line, // one line
	"word": inert.Word, // an id or code
	"sink": sink,       // text already laid out by the CLI's renderer
	"left": timeLeft,
	"when": func(t time.Time) string { return t.Local().Format(time.DateTime) },
}

// timeLeft is how long until t, to the second, or "expired".
func timeLeft(t time.Time) string {
	d := time.Until(t).Round(time.Second)
	if d <= 0 {
		return "expired"
	}
	return d.String()
}

// sink is s with any character a screen would obey or hide written as an
// escape, and nothing else changed: for text the CLI's renderer already
// made inert (show's output, the edit document), whose own escapes must
// read as they are. It guards the page should such text ever hold one.
func sink(s string) string {
	var b strings.Builder
	w := inert.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Flush()
	return b.String()
}
