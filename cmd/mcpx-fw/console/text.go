package console

import (
	"strings"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

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
