package main

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// addWidthFlag gives a command that prints for a person --width, the
// screen width its rows are cut at (see screen).
func addWidthFlag(c *cobra.Command) {
	c.Flags().Int("width", 0, fmt.Sprintf("cut rows at this many columns (default: the terminal's width, else %d)", defaultWidth))
}

// screenFor is the screen c's output is laid out for. Its width is the
// terminal's when stdout is one (or --width when that is narrower: a row
// wider than the terminal is what the rows are cut to prevent); else
// --width; else the terminal's that stderr is, when stdout goes to a pager
// or a file on that screen; else defaultWidth, which is also what tests
// and scripts get. Ambiguous-width characters count two columns in a
// Chinese, Japanese or Korean locale.
func screenFor(c *cobra.Command) (screen, error) {
	asked, err := c.Flags().GetInt("width")
	if err != nil {
		return screen{}, err
	}
	if c.Flags().Changed("width") && asked < minWidth {
		return screen{}, usageError{fmt.Errorf("--width %d is narrower than %d columns\nTry: --width 80", asked, minWidth)}
	}
	width := chooseWidth(asked, terminalWidth(os.Stdout), terminalWidth(os.Stderr))
	return screen{width: width, wideAmbiguous: eastAsianLocale(os.Getenv)}, nil
}

// chooseWidth applies screenFor's order to the width asked for and the
// widths of the terminals stdout and stderr are (0: none).
func chooseWidth(asked, stdout, stderr int) int {
	switch {
	case stdout > 0 && asked > 0:
		return min(asked, stdout)
	case stdout > 0:
		return stdout
	case asked > 0:
		return asked
	case stderr > 0:
		return stderr
	}
	return defaultWidth
}

// terminalWidth is the width in columns of the terminal f is (TIOCGWINSZ
// on Unix), or 0 when f is no terminal or does not know its size.
func terminalWidth(f *os.File) int {
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return 0
	}
	w, _, err := term.GetSize(fd)
	if err != nil || w <= 0 {
		return 0
	}
	return max(w, minWidth)
}

// eastAsianLocale reports whether the locale (LC_ALL, else LC_CTYPE, else
// LANG) is Chinese, Japanese or Korean, where a terminal may draw East
// Asian ambiguous-width characters two columns wide; counting them so
// there only makes rows shorter.
func eastAsianLocale(getenv func(string) string) bool {
	loc := cmp.Or(getenv("LC_ALL"), getenv("LC_CTYPE"), getenv("LANG"))
	for _, lang := range []string{"ja", "ko", "zh"} {
		if strings.HasPrefix(loc, lang) {
			return true
		}
	}
	return false
}
