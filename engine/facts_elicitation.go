package engine

import (
	"maps"
	"slices"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// elicitationFacts are an elicitation's facts: its mode, the form's fields
// and texts screened as a prompt's are (folded, hidden text, secret
// stems), the URL's parts, and at the result stage the texts of an
// accepted answer screened the same way. A form asking for a password and
// an answer carrying a key are found with the words and screens sampling
// uses.
func elicitationFacts(req, res map[string]any) map[string]any {
	message, _ := req["message"].(string)
	fields := formFields(req)
	texts := append(append([]any{message}, schemaTexts(req)...), fieldTexts(fields)...)
	names := make([]any, len(fields))
	docs := make([]any, len(fields))
	for i, f := range fields {
		names[i], docs[i] = f.name, f.document()
	}
	folded, hidden := foldTexts(texts)
	// A field without a title is shown by its name: fold the names too,
	// and count what tag characters in them spell as hidden text.
	foldedNames, hiddenInNames := foldTexts(names)
	hidden = joinLines(hidden, hiddenInNames)
	answers := answerTexts(res)
	answerFolded, answerHidden := foldTexts(answers)
	return map[string]any{
		"mode":                validate.ElicitationMode(req),
		"message_bytes":       len(message),
		"fields":              docs,
		"field_names":         names,
		"folded_field_names":  foldedNames,
		"texts":               texts,
		"folded_texts":        folded,
		"hidden_text":         hidden,
		"secret_stems":        secretStemsIn(screenedTexts(texts, folded, hidden)),
		"url":                 urlFacts(req),
		"answer_texts":        answers,
		"answer_folded_texts": answerFolded,
		"answer_hidden_text":  answerHidden,
		"answer_secret_stems": secretStemsIn(screenedTexts(answers, answerFolded, answerHidden)),
	}
}

// formField is one property of a form's requestedSchema as the facts
// describe it.
type formField struct {
	name, kind, format, title, description string
	required, hasDefault, multi            bool
	enumTitles                             []any
	enumCount                              int
}

func (f formField) document() map[string]any {
	return map[string]any{
		"name": f.name, "type": f.kind, "format": f.format, "title": f.title, "description": f.description,
		"required": f.required, "has_default": f.hasDefault, "enum_count": f.enumCount, "multi": f.multi,
	}
}

// formFields lists the requestedSchema's properties sorted by name (a
// JSON object has no order a policy could rely on).
func formFields(req map[string]any) []formField {
	schema, _ := req["requestedSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	if list, ok := schema["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	out := make([]formField, 0, len(props))
	for name, p := range props {
		prop, _ := p.(map[string]any)
		out = append(out, fieldOf(name, prop, required[name]))
	}
	slices.SortFunc(out, func(a, b formField) int { return strings.Compare(a.name, b.name) })
	return out
}

func fieldOf(name string, prop map[string]any, required bool) formField {
	f := formField{name: name, required: required}
	f.kind, _ = prop["type"].(string)
	f.format, _ = prop["format"].(string)
	f.title, _ = prop["title"].(string)
	f.description, _ = prop["description"].(string)
	_, f.hasDefault = prop["default"]
	f.multi = f.kind == "array"
	options := prop
	if f.multi {
		options, _ = prop["items"].(map[string]any)
	}
	f.enumCount, f.enumTitles = enumOf(options)
	return f
}

// enumOf counts the choices of an enum schema in any of SEP-1330's forms
// (enum with or without enumNames, oneOf or anyOf of {const, title}) and
// lists the titles the user would read.
func enumOf(s map[string]any) (int, []any) {
	var titles []any
	if names, ok := s["enumNames"].([]any); ok {
		titles = append(titles, stringsOf(names)...)
	}
	if values, ok := s["enum"].([]any); ok {
		return len(values), titles
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if opts, ok := s[key].([]any); ok {
			for _, o := range opts {
				if om, ok := o.(map[string]any); ok {
					if t, ok := om["title"].(string); ok {
						titles = append(titles, t)
					}
				}
			}
			return len(opts), titles
		}
	}
	return 0, titles
}

// schemaTexts are the form's own title and description, when it has them.
func schemaTexts(req map[string]any) []any {
	schema, _ := req["requestedSchema"].(map[string]any)
	var out []any
	for _, key := range []string{"title", "description"} {
		if t, ok := schema[key].(string); ok && t != "" {
			out = append(out, t)
		}
	}
	return out
}

// fieldTexts are the texts a form shows besides its message and its own
// title and description: every
// field's title, description and enum titles, in field order.
func fieldTexts(fields []formField) []any {
	var out []any
	for _, f := range fields {
		if f.title != "" {
			out = append(out, f.title)
		}
		if f.description != "" {
			out = append(out, f.description)
		}
		out = append(out, f.enumTitles...)
	}
	return out
}

// answerTexts are the string values of an accepted answer's content, in
// field-name order, a multi-select's choices one by one: what the user
// typed or picked, which goes back to the upstream.
func answerTexts(res map[string]any) []any {
	out := []any{}
	if res["action"] != "accept" {
		return out
	}
	content, _ := res["content"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(content)) {
		switch v := content[k].(type) {
		case string:
			out = append(out, v)
		case []any:
			out = append(out, stringsOf(v)...)
		}
	}
	return out
}

func stringsOf(l []any) []any {
	out := make([]any, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// joinLines joins the hidden texts of two lists of texts, one line each.
func joinLines(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
