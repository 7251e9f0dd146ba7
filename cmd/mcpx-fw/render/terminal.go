package render

import (
	"cmp"
	"os"
	"strings"

	"golang.org/x/term"
)

// ForTerminal is the layout for output to stdout, asked wide (0: not
// asked). Its width is the terminal's when stdout is one (or asked when
// that is narrower: a row wider than the terminal is what the rows are cut
// to prevent); else asked; else the terminal's that stderr is, when stdout
// goes to a pager or a file on that screen; else DefaultWidth, which is
// also what tests and scripts get. Ambiguous-width characters count two
// columns in a Chinese, Japanese or Korean locale.
func ForTerminal(asked int) Layout {
	return forScreens(asked, DefaultWidth)
}

// ForTable is the layout of a table (review list, audit): ForTerminal's,
// but Uncut when neither stdout nor stderr is a terminal and no width was
// asked. No terminal is there to wrap a row, and a script or a file gets
// each row whole, as the JSON gives each item.
func ForTable(asked int) Layout {
	return forScreens(asked, Uncut)
}

func forScreens(asked, none int) Layout {
	width := chooseWidth(asked, terminalWidth(os.Stdout), terminalWidth(os.Stderr), none)
	return Layout{Width: width, WideAmbiguous: eastAsianLocale(os.Getenv)}
}

// chooseWidth applies ForTerminal's order to the width asked for and the
// widths of the terminals stdout and stderr are (0: none); none when
// there is neither a terminal nor a width asked.
func chooseWidth(asked, stdout, stderr, none int) int {
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
	return none
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
	return max(w, MinWidth)
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
