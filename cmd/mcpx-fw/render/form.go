package render

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// formView lays out the form of an elicitation (its requestedSchema) as
// the user will meet it: each field with its type, constraints, texts and
// choices. It touches nothing but the fold count of its view.
type formView struct{ *view }

// form lays out requestedSchema: each property in the order the upstream
// wrote them (the order the host shows them in), then whatever else the
// schema holds.
func (v formView) form(w io.Writer, raw json.RawMessage, req map[string]any) {
	schema, isMap := req["requestedSchema"].(map[string]any)
	if !isMap {
		fmt.Fprintln(w, "\nForm: none")
		if s, ok := req["requestedSchema"]; ok {
			writeLines(w, "  ", v.member("requestedSchema", "requestedSchema", s, 1))
		}
		return
	}
	props, _ := schema["properties"].(map[string]any)
	names := propertyOrder(raw, props)
	required := requiredSet(schema["required"])
	fmt.Fprintf(w, "\nForm (%d field(s); what the user enters goes to the upstream):\n", len(names))
	for i, name := range names {
		writeLines(w, "  ", v.field(i+1, name, props[name], required[name]))
	}
	rest := v.schemaRest(schema, props)
	if len(rest) > 0 {
		fmt.Fprintln(w, "  Other members of the schema:")
		writeLines(w, "    ", rest)
	}
}

// schemaRest lays out what a schema holds besides its properties, the
// names they require and type object (its own title and description,
// say), and names a required field it lacks.
func (v formView) schemaRest(schema, props map[string]any) []string {
	var skip []string
	if _, ok := schema["properties"].(map[string]any); ok {
		skip = append(skip, "properties")
	}
	if list, ok := schema["required"].([]any); ok && len(requiredList(list)) == len(list) {
		skip = append(skip, "required")
	}
	if schema["type"] == "object" {
		skip = append(skip, "type")
	}
	rest := v.members(schema, nil, skip...)
	var unknown []string
	for _, r := range requiredList(schema["required"]) {
		if _, ok := props[r]; !ok {
			unknown = append(unknown, inert.Quote(r))
		}
	}
	if len(unknown) > 0 {
		rest = append(rest, "required, but no such field: "+strings.Join(unknown, ", "))
	}
	return rest
}

// fieldShown are the members of a property that field lays out by name.
var fieldShown = []string{"type", "title", "description", "default", "format", "minLength", "maxLength",
	"minimum", "maximum", "minItems", "maxItems"}

// constraintKeys are a property's constraints, in the order shown.
var constraintKeys = []string{"format", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"}

// field lays out one property: "[n] name: type, required" with its
// constraints, then its title, description, default and choices, then
// any other member.
func (v formView) field(n int, name string, p any, required bool) []string {
	head := fmt.Sprintf("[%d] %s", n, inert.Word(name))
	pm, isMap := p.(map[string]any)
	if !isMap {
		return v.member(head, "", p, 1)
	}
	head += ": " + v.fieldType(pm)
	if required {
		head += ", required"
	} else {
		head += ", optional"
	}
	var cons []string
	for _, k := range constraintKeys {
		if val, ok := pm[k]; ok {
			cons = append(cons, k+" "+v.word(val))
		}
	}
	if len(cons) > 0 {
		head += "; " + strings.Join(cons, ", ")
	}
	var body []string
	for _, k := range []string{"title", "description", "default"} {
		if val, ok := pm[k]; ok {
			body = append(body, v.member(k, k, val, 1)...)
		}
	}
	choices, used := v.choices(pm)
	body = append(body, choices...)
	body = append(body, v.members(pm, nil, slices.Concat(fieldShown, used)...)...)
	return append([]string{head}, indentLines(body, "      ")...)
}

// fieldType is a property's type as the user will meet it: a choice of
// one or several when it offers values to pick.
func (v formView) fieldType(pm map[string]any) string {
	t := "(no type)"
	if val, ok := pm["type"]; ok {
		t = v.word(val)
	}
	items, _ := pm["items"].(map[string]any)
	switch {
	case pm["type"] == "array" && items != nil:
		return t + " (multi-select)"
	case hasAny(pm, "enum", "oneOf", "anyOf"):
		return t + " (single-select)"
	}
	return t
}

// choices lays out the values a property offers, with their titles
// (SEP-1330: enum, enum with enumNames, oneOf/anyOf of const and title,
// and for multi-select the same under items), and names the members it
// showed.
func (v formView) choices(pm map[string]any) ([]string, []string) {
	var out, used []string
	if list, ok := pm["enum"].([]any); ok {
		titles, hasTitles := pm["enumNames"].([]any)
		out = append(out, v.choiceList("choices", list, titles)...)
		used = append(used, "enum")
		if hasTitles {
			used = append(used, "enumNames")
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if list, ok := pm[k].([]any); ok {
			out = append(out, v.constChoices("choices, "+k, list)...)
			used = append(used, k)
		}
	}
	items, ok := pm["items"].(map[string]any)
	if !ok {
		return out, used
	}
	used = append(used, "items")
	var itemUsed []string
	if list, ok := items["enum"].([]any); ok {
		out = append(out, v.choiceList("choices, pick any", list, nil)...)
		itemUsed = append(itemUsed, "enum")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := items[k].([]any); ok {
			out = append(out, v.constChoices("choices, pick any, "+k, list)...)
			itemUsed = append(itemUsed, k)
		}
	}
	rest := map[string]any{}
	for _, k := range orderedKeys(items, nil, itemUsed) {
		rest[k] = items[k]
	}
	if len(rest) > 0 {
		out = append(out, v.member("items", "items", rest, 1)...)
	}
	return out, used
}

// choiceList lays out enum values, each with its title when titles (a
// legacy enumNames list) gives one.
func (v formView) choiceList(label string, values, titles []any) []string {
	out := []string{fmt.Sprintf("%s (%d):", label, len(values))}
	shown, rest := v.choiceFold(len(values))
	for i := range shown {
		line := "- " + v.choiceValue(values[i])
		if i < len(titles) {
			line += " — title " + v.choiceValue(titles[i])
		}
		out = append(out, "  "+line)
	}
	if len(titles) > len(values) {
		out = append(out, fmt.Sprintf("  (enumNames has %d titles for %d values)", len(titles), len(values)))
	}
	return append(out, rest...)
}

// constChoices lays out oneOf/anyOf choices: each const and its title,
// and any other member of the choice.
func (v formView) constChoices(label string, list []any) []string {
	out := []string{fmt.Sprintf("%s (%d):", label, len(list))}
	shown, rest := v.choiceFold(len(list))
	for i := range shown {
		c, isMap := list[i].(map[string]any)
		if !isMap {
			out = append(out, indentLines(v.member("-", "", list[i], 2), "  ")...)
			continue
		}
		line := "- " + v.choiceValue(c["const"])
		if _, ok := c["const"]; !ok {
			line = "- (no const)"
		}
		if t, ok := c["title"]; ok {
			line += " — title " + v.choiceValue(t)
		}
		out = append(out, "  "+line)
		out = append(out, indentLines(v.members(c, nil, "const", "title"), "      ")...)
	}
	return append(out, rest...)
}

// choiceFold is how many of n choices are shown and the fold line for
// the rest: past foldItems, unless the view is full.
func (v formView) choiceFold(n int) (int, []string) {
	if v.full || n <= foldItems {
		return n, nil
	}
	v.folded++
	return foldItems, []string{fmt.Sprintf("  - …%d more choices folded", n-foldItems)}
}

// choiceValue is a choice's value or title on one line, never folded.
func (v formView) choiceValue(val any) string {
	s, _ := v.fit(val, "title", flatDepth)
	return s
}
