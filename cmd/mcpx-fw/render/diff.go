package render

import (
	"strings"
)

// diffContext is how many unchanged lines LineDiff keeps around a change.
const diffContext = 2

// maxDiffCells bounds the work of the line matching; past it the changed
// middle is shown as removed and added whole, which is still correct.
const maxDiffCells = 4_000_000

// LineDiff shows how b differs from a, line by line: "- " removed, "+ "
// added, "  " unchanged context, "…" for unchanged lines left out. It is
// what show prints for an edit, so a reviewer sees what the approver
// changed without reading both versions. "" when they are equal.
func LineDiff(a, b string) string {
	x, y := strings.Split(strings.TrimSuffix(a, "\n"), "\n"), strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	pre := commonPrefix(x, y)
	suf := commonSuffix(x[pre:], y[pre:])
	ops := matchLines(x[pre:len(x)-suf], y[pre:len(y)-suf])
	if len(ops) == 0 {
		return ""
	}
	var all []string
	for _, l := range x[:pre] {
		all = append(all, "  "+l)
	}
	all = append(all, ops...)
	for _, l := range x[len(x)-suf:] {
		all = append(all, "  "+l)
	}
	return strings.Join(trimContext(all), "\n") + "\n"
}

func commonPrefix(x, y []string) int {
	n := 0
	for n < len(x) && n < len(y) && x[n] == y[n] {
		n++
	}
	return n
}

func commonSuffix(x, y []string) int {
	n := 0
	for n < len(x) && n < len(y) && x[len(x)-1-n] == y[len(y)-1-n] {
		n++
	}
	return n
}

// matchLines is a longest-common-subsequence diff of the changed middle.
func matchLines(x, y []string) []string {
	if len(x) == 0 && len(y) == 0 {
		return nil
	}
	if len(x)*len(y) > maxDiffCells {
		return append(prefixed("- ", x), prefixed("+ ", y)...)
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out, i, j = append(out, "  "+x[i]), i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			out, i = append(out, "- "+x[i]), i+1
		default:
			out, j = append(out, "+ "+y[j]), j+1
		}
	}
	return out
}

func prefixed(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}

// trimContext keeps changed lines and diffContext unchanged lines around
// each, replacing each run left out with one "…".
func trimContext(lines []string) []string {
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if strings.HasPrefix(l, "  ") {
			continue
		}
		for k := max(0, i-diffContext); k <= min(len(lines)-1, i+diffContext); k++ {
			keep[k] = true
		}
	}
	var out []string
	for i, l := range lines {
		switch {
		case keep[i]:
			out = append(out, l)
		case len(out) == 0 || out[len(out)-1] != "…":
			out = append(out, "…")
		}
	}
	return out
}
