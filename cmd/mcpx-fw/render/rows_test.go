package render

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
)

func TestWrap(t *testing.T) {
	pad := strings.Repeat(" ", 40)
	cases := []struct {
		name string
		s    Layout
		line string
		want []string
	}{
		{"short", Layout{Width: 20}, "  │ short", []string{"  │ short"}},
		{"exactly the width", Layout{Width: 20}, "  │ twenty columns..", []string{"  │ twenty columns.."}},
		{"after a space", Layout{Width: 20}, "  │ one two three four five", []string{"  │ one two three ", "  ┆ four five"}},
		{"after a comma", Layout{Width: 20}, `  x: {"a":1,"bb":22,"ccc":333}`, []string{`  x: {"a":1,"bb":22,`, `  ┆ "ccc":333}`}},
		{"a space run is cut too", Layout{Width: 20}, "      │ hi" + pad + "To decide",
			[]string{"      │ hi          ", "      ┆             ", "      ┆             ", "      ┆       To ", "      ┆ decide"}},
		{"a word longer than a row", Layout{Width: 20}, "- " + strings.Repeat("x", 30), []string{"- " + strings.Repeat("x", 18), "┆ " + strings.Repeat("x", 12)}},
		{"wide characters take two columns", Layout{Width: 20}, "  │ " + strings.Repeat("世界", 9),
			[]string{"  │ 世界世界世界世界", "  ┆ 世界世界世界世界", "  ┆ 世界"}},
		{"an escape stays whole", Layout{Width: 20}, `x \u202e\u202e\u202e\u202e\u202e`, []string{`x \u202e\u202e\u202e`, `┆ \u202e\u202e`}},
		{"marks stay on their character", Layout{Width: 12}, "abcdefghije\u0301\u0302\u0303xyz", []string{"abcdefghije\u0301\u0302\u0303x", "┆ yz"}},
		{"indentation capped at half the screen", Layout{Width: 20}, strings.Repeat(" ", 30) + "abc",
			[]string{strings.Repeat(" ", 20), "        ┆ " + strings.Repeat(" ", 10), "        ┆ abc"}},
		{"ambiguous characters on a wide screen", Layout{Width: 20, WideAmbiguous: true}, "  │ αβγδεζηθικλμνξ",
			[]string{"  │ αβγδεζη", "  ┆ θικλμνξ"}},
		{"the zero screen is 100 wide", Layout{}, strings.Repeat("x", 100), []string{strings.Repeat("x", 100)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.s.wrap(c.line)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("wrap(%q) (-want +got):\n%s", c.line, diff)
			}
			checkRows(t, c.s, c.line, got)
		})
	}
}

// checkRows: rows are no wider than s, start (after the first) with
// indentation and the mark, and read back as line.
func checkRows(t *testing.T, s Layout, line string, rows []string) {
	t.Helper()
	var back strings.Builder
	for i, r := range rows {
		if n := rendertest.TermColumns(r, s.WideAmbiguous); n > s.cols() {
			t.Fatalf("row %d of %q is %d columns wide, over %d: %q", i, line, n, s.cols(), r)
		}
		if i == 0 {
			back.WriteString(r)
			continue
		}
		rest, ok := strings.CutPrefix(strings.TrimLeft(r, " "), ContMark+" ")
		if !ok {
			t.Fatalf("row %d of %q does not start with its indentation and %s: %q", i, line, ContMark, r)
		}
		back.WriteString(rest)
	}
	if back.String() != line {
		t.Fatalf("the rows of %q read back as %q", line, back.String())
	}
}

// FuzzWrap: any line, on any screen, is cut into rows that fit it, start
// with the mark, and read back as the line.
func FuzzWrap(f *testing.F) {
	f.Add("      │ hi"+strings.Repeat(" ", 300)+"To decide", uint8(0), false)
	f.Add("  │ "+strings.Repeat("世界 ", 40), uint8(3), true)
	f.Add(`  - [tool_use "x\u202e\\" id=`+strings.Repeat("e\u0301\u0302\u0303", 50), uint8(7), false)
	f.Fuzz(func(t *testing.T, line string, w uint8, wide bool) {
		if !utf8.ValidString(line) || strings.Contains(line, "\n") {
			return // wrap gets inert's output, one line at a time
		}
		s := Layout{Width: MinWidth + int(w), WideAmbiguous: wide}
		checkRows(t, s, line, s.wrap(line))
	})
}

func TestChooseWidthAndLocale(t *testing.T) {
	cases := []struct {
		name                  string
		asked, stdout, stderr int
		none                  int // the width when there is no terminal and none was asked
		want                  int
	}{
		{"no terminal, nothing asked", 0, 0, 0, DefaultWidth, DefaultWidth},
		{"no terminal, nothing asked, a table", 0, 0, 0, Uncut, Uncut},
		{"stdout a terminal", 0, 80, 80, DefaultWidth, 80},
		{"stdout a terminal, a table", 0, 80, 80, Uncut, 80},
		{"stdout a terminal narrower than asked", 120, 80, 80, DefaultWidth, 80},
		{"stdout a terminal wider than asked", 60, 80, 80, DefaultWidth, 60},
		{"piped, asked", 120, 0, 80, DefaultWidth, 120},
		{"piped, asked, a table", 120, 0, 0, Uncut, 120},
		{"piped to a pager on a terminal", 0, 0, 132, DefaultWidth, 132},
		{"piped to a pager on a terminal, a table", 0, 0, 132, Uncut, 132},
	}
	for _, c := range cases {
		if got := chooseWidth(c.asked, c.stdout, c.stderr, c.none); got != c.want {
			t.Errorf("%s: chooseWidth(%d, %d, %d, %d) = %d, want %d", c.name, c.asked, c.stdout, c.stderr, c.none, got, c.want)
		}
	}
	for env, want := range map[string]bool{"LANG=ja_JP.UTF-8": true, "LC_ALL=zh_CN.UTF-8": true, "LANG=ko_KR.UTF-8": true,
		"LANG=en_US.UTF-8": false, "": false, "LC_ALL=C LANG=ja_JP.UTF-8": false} {
		vars := map[string]string{}
		for _, kv := range strings.Fields(env) {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		if got := eastAsianLocale(func(k string) string { return vars[k] }); got != want {
			t.Errorf("eastAsianLocale(%s) = %v, want %v", env, got, want)
		}
	}
}
