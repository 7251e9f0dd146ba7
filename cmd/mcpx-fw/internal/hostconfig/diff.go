package hostconfig

import (
	"bytes"
	"fmt"
	"strings"
)

// context is how many unchanged lines a hunk of Diff shows around a
// change.
const context = 3

// lcsCells bounds the table of the longest common subsequence: past it,
// the changed part is shown as all its old lines out and all its new ones
// in, still a correct diff.
const lcsCells = 1 << 22

// Diff is a unified line diff of two versions of a file, what --dry-run
// prints: hunks of the lines only in the old one ("-") and only in the
// new one ("+"), with up to three unchanged lines around each, under
// "@@ -line,count +line,count @@". The lines the two share at their
// start and end are set aside first, so a rewrite of a few entries of a
// large file (~/.claude.json) costs the size of those entries, and the
// rest of the file, the host's own state, is not printed.
func Diff(name string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := lines(old), lines(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]op, 0, len(a)+len(b))
	for i := range pre {
		ops = append(ops, op{' ', i, i})
	}
	for _, o := range middle(a[pre:len(a)-suf], b[pre:len(b)-suf]) {
		ops = append(ops, op{o.kind, o.a + pre, o.b + pre})
	}
	for k := suf; k > 0; k-- {
		ops = append(ops, op{' ', len(a) - k, len(b) - k})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", name, name)
	for _, h := range hunks(ops) {
		writeHunk(&out, ops[h[0]:h[1]], a, b)
	}
	return out.String()
}

// op is one line of a diff: kept (' '), only in the old file ('-') or
// only in the new one ('+'), with where it is in each.
type op struct {
	kind byte
	a, b int
}

// middle is the diff of the changed part, by longest common subsequence.
func middle(a, b []string) []op {
	var ops []op
	if len(a)*len(b) > lcsCells {
		for i := range a {
			ops = append(ops, op{'-', i, 0})
		}
		for j := range b {
			ops = append(ops, op{'+', len(a), j})
		}
		return ops
	}
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', i, j})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', i, j})
			i++
		default:
			ops = append(ops, op{'+', i, j})
			j++
		}
	}
	return ops
}

// hunks are the [start, end) ranges of ops to print: each change with
// its context, ranges that touch made one.
func hunks(ops []op) [][2]int {
	var out [][2]int
	for i, o := range ops {
		if o.kind == ' ' {
			continue
		}
		start, end := max(i-context, 0), min(i+1+context, len(ops))
		if n := len(out); n > 0 && start <= out[n-1][1] {
			out[n-1][1] = end
			continue
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

func writeHunk(out *strings.Builder, ops []op, a, b []string) {
	na, nb := 0, 0
	for _, o := range ops {
		na += btoi(o.kind != '+')
		nb += btoi(o.kind != '-')
	}
	fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", ops[0].a+btoi(na > 0), na, ops[0].b+btoi(nb > 0), nb)
	for _, o := range ops {
		if o.kind == '-' {
			fmt.Fprintf(out, "-%s\n", a[o.a])
		} else {
			fmt.Fprintf(out, "%c%s\n", o.kind, b[o.b])
		}
	}
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
