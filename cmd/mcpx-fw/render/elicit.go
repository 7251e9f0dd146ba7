package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// elicitation lays out an elicitation request as the user will meet it:
// the message, then every field of the form or the URL the user is sent
// to, then any other member, so the operator sees all the host gets.
func (v *view) elicitation(w io.Writer, raw json.RawMessage) {
	req := decodeObject(raw)
	fmt.Fprintln(w, "\nMessage (the user reads it):")
	if m, ok := req["message"]; ok {
		writeLines(w, "  ", v.prose("message", m))
	} else {
		fmt.Fprintln(w, "  (none)")
	}
	skip := []string{"mode", "message"}
	if validate.ElicitationMode(req) == "url" {
		v.urlSection(w, req)
		skip = append(skip, "url", "elicitationId")
	} else {
		v.form(w, raw, req)
		skip = append(skip, "requestedSchema")
	}
	if rest := v.members(req, nil, skip...); len(rest) > 0 {
		fmt.Fprintln(w, "\nOther members of the request:")
		writeLines(w, "  ", rest)
	}
}

// form lays out requestedSchema: each property in the order the upstream
// wrote them (the order the host shows them in), then whatever else the
// schema holds.
func (v *view) form(w io.Writer, raw json.RawMessage, req map[string]any) {
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
func (v *view) schemaRest(schema, props map[string]any) []string {
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
func (v *view) field(n int, name string, p any, required bool) []string {
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
func (v *view) fieldType(pm map[string]any) string {
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
func (v *view) choices(pm map[string]any) ([]string, []string) {
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
func (v *view) choiceList(label string, values, titles []any) []string {
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
func (v *view) constChoices(label string, list []any) []string {
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
func (v *view) choiceFold(n int) (int, []string) {
	if v.full || n <= foldItems {
		return n, nil
	}
	v.folded++
	return foldItems, []string{fmt.Sprintf("  - …%d more choices folded", n-foldItems)}
}

// choiceValue is a choice's value or title on one line, never folded.
func (v *view) choiceValue(val any) string {
	s, _ := v.fit(val, "title", flatDepth)
	return s
}

// elicitAnswer lays out the answer a user gave, each value against the
// field it fills, in the form's order; values for no field follow. These
// are the user's data: shown here so the operator sees what the upstream
// will get, never logged.
func (v *view) elicitAnswer(w io.Writer, request json.RawMessage, res map[string]any) {
	fmt.Fprintf(w, "  action: %s\n", v.word(orNone(res["action"])))
	content, isMap := res["content"].(map[string]any)
	if c, ok := res["content"]; ok && !isMap {
		writeLines(w, "  ", v.member("content", "content", c, 1))
	}
	req := decodeObject(request)
	schema, _ := req["requestedSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if isMap || res["action"] == "accept" {
		fmt.Fprintln(w, "  content:")
		for i, name := range propertyOrder(request, props) {
			label := fmt.Sprintf("[%d] %s", i+1, inert.Word(name))
			if val, ok := content[name]; ok {
				lines := v.member(label, "", val, 1)
				if t := choiceTitles(props[name], val); t != "" && len(lines) == 1 {
					lines[0] += " — " + t
				}
				writeLines(w, "    ", lines)
			} else {
				fmt.Fprintf(w, "    %s: (not given)\n", label)
			}
		}
		for _, k := range orderedKeys(content, nil, nil) {
			if _, ok := props[k]; !ok {
				writeLines(w, "    ", v.member("not a field of the form: "+inert.Word(k), "", content[k], 1))
			}
		}
	}
	if rest := v.members(res, nil, "action", "content"); len(rest) > 0 {
		writeLines(w, "  ", rest)
	}
}

// propertyOrder is the names of props in the order the request wrote
// them (a map forgets it, and the host shows the fields in it); a name
// the raw order does not give (it cannot be read) follows, sorted.
func propertyOrder(raw json.RawMessage, props map[string]any) []string {
	var req, schema map[string]json.RawMessage
	_ = json.Unmarshal(raw, &req)
	_ = json.Unmarshal(req["requestedSchema"], &schema)
	seen := make(map[string]bool, len(props))
	var out []string
	for _, k := range objectKeys(schema["properties"]) {
		if _, ok := props[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, k := range orderedKeys(props, nil, nil) {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// objectKeys is the keys of a JSON object in the order written; nil when
// raw is not an object.
func objectKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
		keys = append(keys, k)
	}
	return keys
}

func requiredList(r any) []string {
	list, _ := r.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func requiredSet(r any) map[string]bool {
	set := map[string]bool{}
	for _, s := range requiredList(r) {
		set[s] = true
	}
	return set
}

// hasAny reports whether m holds any of keys, decoded or raw alike.
func hasAny[V any](m map[string]V, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// choiceTitles names the titles of the choices a value picks (one, or
// each of a multi-select), so the operator reads the answer as the user
// saw it; "" when the field has no titled choices.
func choiceTitles(p, val any) string {
	pm, _ := p.(map[string]any)
	choices := titledChoices(pm)
	if len(choices) == 0 {
		return ""
	}
	picked, isList := val.([]any)
	if !isList {
		picked = []any{val}
	}
	byValue := make(map[string]string, len(choices))
	for _, c := range choices {
		if _, ok := byValue[c.value]; !ok {
			byValue[c.value] = c.title
		}
	}
	var titles []string
	for _, e := range picked {
		if t, ok := byValue[shapeLine(e)]; ok {
			titles = append(titles, inert.Quote(t))
		}
	}
	if len(titles) == 0 {
		return ""
	}
	return "title " + strings.Join(titles, ", ")
}
