package config

import (
	"maps"
	"reflect"
	"slices"
	"strings"
)

// hostKeys are what a host's config (mcpServers in Claude's, servers in
// VS Code's) writes in a server entry that a server here writes
// otherwise: the hint an unknown key of theirs gets.
var hostKeys = map[string]string{
	"cwd":  " (did you mean dir?)",
	"type": " (leave it out: command makes a stdio server, url an HTTP one)",
}

// suggestion is what follows "unknown key NAME": the known key at that
// level nearest to name, when one is near enough to be a slip of the
// keyboard, else nothing.
func suggestion(name string, typ reflect.Type) string {
	name = strings.ToLower(name)
	if hint, ok := hostKeys[name]; ok && typ == reflect.TypeFor[Server]() {
		return hint
	}
	if best := nearest(name, slices.Sorted(maps.Keys(fieldsOf(typ)))); best != "" {
		return " (did you mean " + best + "?)"
	}
	return ""
}

// nearest is the word of words nearest to name (the first of equals),
// when it is near enough to be a slip of the keyboard: within a quarter
// of name's length, plus one, edits. Else "".
func nearest(name string, words []string) string {
	best, bestDist := "", len(name)/4+1
	for _, w := range words {
		if d := distance(name, w); d <= bestDist && (best == "" || d < bestDist) {
			best, bestDist = w, d
		}
	}
	return best
}

// distance is the edit distance between a and b counting a swap of two
// neighbouring letters as one edit (servres is one from servers).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
