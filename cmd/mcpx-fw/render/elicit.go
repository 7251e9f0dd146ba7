package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// elicitView lays out an elicitation: its message, then its form or the
// URL it sends the user to, and the answer the user gave. It touches
// nothing but the fold count of its view.
type elicitView struct{ *view }

// elicitation lays out an elicitation request as the user will meet it:
// the message, then every field of the form or the URL the user is sent
// to, then any other member, so the operator sees all the host gets.
func (v elicitView) elicitation(w io.Writer, raw json.RawMessage) {
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
		formView{v.view}.form(w, raw, req)
		skip = append(skip, "requestedSchema")
	}
	if rest := v.members(req, nil, skip...); len(rest) > 0 {
		fmt.Fprintln(w, "\nOther members of the request:")
		writeLines(w, "  ", rest)
	}
}

// elicitAnswer lays out the answer a user gave, each value against the
// field it fills, in the form's order; values for no field follow. These
// are the user's data: shown here so the operator sees what the upstream
// will get, never logged.
func (v elicitView) elicitAnswer(w io.Writer, request json.RawMessage, res map[string]any) {
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
