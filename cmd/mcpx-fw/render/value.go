package render

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// view lays out what an upstream sent for a person to read. Every string
// goes through inert; a JSON value (a schema, a tool's input, structured
// content, metadata) is shown on one line when short, else as an outline
// of its members. Unless full is set, a long string or a long list of
// plain items is folded, and the fold says how much it hides; folded
// counts the folds so that show can say so and name --full. Keys (a
// schema's property names) and the members in wholeKeys are never folded.
// The layouts of each kind's sections (samplingView, contentView,
// elicitView, formView, rootsView) wrap one view, and share its fold
// count: it is the only state any of them touches.
type view struct {
	full   bool
	folded int
}

const (
	// inlineWidth is how long a value's one-line form may be before it is
	// laid out as an outline.
	inlineWidth = 100
	// foldRunes is how much of a long string is shown before the rest is
	// folded.
	foldRunes = 200
	// foldItems is how many items of a long list of plain values are shown
	// before the rest is folded.
	foldItems = 20
	// flatDepth is the outline depth past which values stay on one line, so
	// deep nesting does not run off the screen (nothing is hidden by it).
	flatDepth = 8
)

// wholeKeys are the members whose strings and lists are never folded:
// what tells the model what a tool or a property is (a description, a
// title, a name) and which properties are required.
var wholeKeys = map[string]bool{"description": true, "title": true, "name": true, "required": true}

// member lays out one member: "label: value" when the value fits on a
// line (or nests deeper than flatDepth), else the label and the value's
// outline indented under it.
func (v *view) member(label, key string, val any, depth int) []string {
	if s, ok := v.fit(val, key, depth); ok {
		return []string{label + ": " + s}
	}
	return append([]string{label + ":"}, indentLines(v.outline(val, key, depth), "  ")...)
}

// members lays out every member of obj but those in skip: first those
// named in first, then the rest by name. It is how a renderer shows
// whatever it has no special layout for, so nothing is left out.
func (v *view) members(obj map[string]any, first []string, skip ...string) []string {
	var out []string
	for _, k := range orderedKeys(obj, first, skip) {
		out = append(out, v.member(inert.Word(k), k, obj[k], 1)...)
	}
	return out
}

// fit is val's one-line form when it is a plain value or a list of them,
// nests past flatDepth, or is no longer than inlineWidth.
func (v *view) fit(val any, key string, depth int) (string, bool) {
	limit := inlineWidth
	if list, ok := val.([]any); depth >= flatDepth || !isContainer(val) || ok && !slices.ContainsFunc(list, isContainer) {
		limit = math.MaxInt
	}
	trial := view{full: v.full}
	var b strings.Builder
	if !trial.inline(&b, val, key, limit) {
		return "", false
	}
	v.folded += trial.folded
	return b.String(), true
}

// inline writes val's one-line form (JSON-like, strings quoted) to b; it
// stops and reports false once b holds more than limit bytes.
func (v *view) inline(b *strings.Builder, val any, key string, limit int) bool {
	switch x := val.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range orderedKeys(x, nil, nil) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(inert.Quote(k) + ":")
			if !v.inline(b, x[k], k, limit) {
				return false
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		shown, rest := v.items(x, key)
		for i, e := range shown {
			if i > 0 {
				b.WriteByte(',')
			}
			if !v.inline(b, e, key, limit) {
				return false
			}
		}
		if rest > 0 {
			fmt.Fprintf(b, ",…%d more items folded", rest)
		}
		b.WriteByte(']')
	default:
		b.WriteString(v.scalar(x, key))
	}
	return b.Len() <= limit
}

// outline lays val out over lines: an object's members one per line, a
// list's items after dashes; what fits stays on one line.
func (v *view) outline(val any, key string, depth int) []string {
	switch x := val.(type) {
	case map[string]any:
		if len(x) > 0 {
			var out []string
			for _, k := range orderedKeys(x, nil, nil) {
				out = append(out, v.member(inert.Word(k), k, x[k], depth+1)...)
			}
			return out
		}
	case []any:
		if len(x) > 0 {
			return v.list(x, key, depth)
		}
	}
	s, _ := v.fit(val, key, flatDepth)
	return []string{s}
}

func (v *view) list(x []any, key string, depth int) []string {
	var out []string
	shown, rest := v.items(x, key)
	for _, e := range shown {
		lines := []string{}
		if s, ok := v.fit(e, key, depth+1); ok {
			lines = append(lines, s)
		} else {
			lines = v.outline(e, key, depth+1)
		}
		out = append(out, "- "+lines[0])
		out = append(out, indentLines(lines[1:], "  ")...)
	}
	if rest > 0 {
		out = append(out, fmt.Sprintf("- …%d more items folded", rest))
	}
	return out
}

// items is the part of list shown and how many items are folded: past
// foldItems, a tail made only of plain values is folded.
func (v *view) items(list []any, key string) ([]any, int) {
	if v.full || wholeKeys[key] || len(list) <= foldItems || slices.ContainsFunc(list[foldItems:], isContainer) {
		return list, 0
	}
	v.folded++
	return list[:foldItems], len(list) - foldItems
}

// scalar is a plain value as shown: strings quoted (and folded past
// foldRunes), numbers as they were written.
func (v *view) scalar(val any, key string) string {
	switch x := val.(type) {
	case nil:
		return "null"
	case string:
		return v.str(x, key)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return inert.Word(x.String())
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return inert.Line(fmt.Sprint(val))
}

func (v *view) str(s, key string) string {
	if v.full || wholeKeys[key] || len(s) <= foldRunes {
		return inert.Quote(s)
	}
	n := 0
	for i := range s {
		if n == foldRunes {
			v.folded++
			return fmt.Sprintf("%s…%d more characters folded", inert.Quote(s[:i]), len([]rune(s[i:])))
		}
		n++
	}
	return inert.Quote(s)
}

// prose is text an upstream wrote, as gutter lines; a value of another
// type as a value.
func (v *view) prose(key string, val any) []string {
	if s, ok := val.(string); ok {
		return gutter(s)
	}
	return v.member(key, key, val, 1)
}

// word is a plain value shown bare where a sentence names it (a role, a
// mime type, a number): an id or a name as inert.Word makes it, anything
// else as its one-line form.
func (v *view) word(val any) string {
	if s, ok := val.(string); ok {
		return inert.Word(s)
	}
	s, _ := v.fit(val, "", flatDepth)
	return s
}

func isContainer(val any) bool {
	switch val.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// orderedKeys are obj's keys but those in skip: those in first that it
// has, in that order, then the others sorted.
func orderedKeys(obj map[string]any, first, skip []string) []string {
	var out, rest []string
	for _, k := range first {
		if _, ok := obj[k]; ok && !slices.Contains(skip, k) {
			out = append(out, k)
		}
	}
	for k := range obj {
		if !slices.Contains(first, k) && !slices.Contains(skip, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func indentLines(lines []string, pad string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = pad + l
	}
	return out
}
