package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// The edit document of an elicitation lets the operator change what the
// user reads, never what the user is asked for: the message, and in form
// mode each field's title and description and the titles of its choices.
// The shape of the form (property names and order, types, constraints,
// required, defaults, choice values) and in URL mode the URL and its id
// appear as "shape" lines for context; the edit is applied to the original
// JSON, so nothing else can change whatever the buffer says, and a shape
// line that differs is refused naming the field.

// elicitDoc is the Editable part of an elicitation request.
type elicitDoc struct {
	Message string `yaml:"message"`
	// Shape is the mode and, in URL mode, the URL and its id: guarded.
	Shape  string     `yaml:"shape"`
	Fields []fieldDoc `yaml:"fields,omitempty"`
}

// fieldDoc is one field of a form: its name and shape guarded, its texts
// Editable.
type fieldDoc struct {
	Name        string      `yaml:"name"`
	Shape       string      `yaml:"shape"`
	Title       *string     `yaml:"title,omitempty"`
	Description *string     `yaml:"description,omitempty"`
	Choices     []choiceDoc `yaml:"choices,omitempty"`
}

// choiceDoc is one titled choice: its value guarded, its title Editable.
type choiceDoc struct {
	Value string  `yaml:"value"`
	Title *string `yaml:"title"`
}

const elicitFormHelp = `Edit the form held by review %s (server %s, %s) before approving it.
You may change the message and each field's title and description, and the
title of each choice. The "shape" lines (the mode, each field's type,
constraints, whether it is required, its default) and every "name" and
"value" say what the user is asked for and must stay as they are; fields
cannot be added, removed or reordered. Save and quit to approve your edit;
leave it unchanged to approve the form as it is; empty the file to cancel.`

const elicitURLHelp = `Edit the URL request held by review %s (server %s, %s) before approving it.
Only the message may change; the "shape" line (the mode, the URL, its id)
must stay as it is. Save and quit to approve your edit; leave it unchanged
to approve it as it is; empty the file to cancel.`

// EditRefusal says why an item has no edit document: a roots list, or
// the answer a user gave, is approved or rejected as it is.
func EditRefusal(it review.Item) error {
	switch {
	case ItemKind(it) == engine.KindRoots:
		return fmt.Errorf("%s: a roots request or list cannot be edited: approve it as it is or reject it", it.ID)
	case ItemKind(it) == engine.KindElicitation && it.Stage == review.StageResult:
		return fmt.Errorf("%s: the user's answer cannot be edited: approve it as it is or reject it", it.ID)
	}
	return nil
}

// elicitNode is the edit document of an elicitation request.
func elicitNode(it review.Item, raw json.RawMessage, req map[string]any) *yaml.Node {
	root := mapping("message", text(fmt.Sprint(orEmpty(req["message"]))), "shape", text(elicitShape(req)))
	if validate.ElicitationMode(req) == "url" {
		root.HeadComment = fmt.Sprintf(elicitURLHelp, inert.Word(it.ID), inert.Line(it.Server), inert.Line(it.Label))
		return root
	}
	root.HeadComment = fmt.Sprintf(elicitFormHelp, inert.Word(it.ID), inert.Line(it.Server), inert.Line(it.Label))
	schema, _ := req["requestedSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	required := requiredSet(schema["required"])
	var fields []*yaml.Node
	for _, name := range propertyOrder(raw, props) {
		p, _ := props[name].(map[string]any)
		f := mapping("name", text(name), "shape", text(fieldShape(p, required[name])))
		for _, k := range []string{"title", "description"} {
			if s, ok := p[k].(string); ok {
				f.Content = append(f.Content, mapping(k, text(s)).Content...)
			}
		}
		if choices := titledChoices(p); len(choices) > 0 {
			var list []*yaml.Node
			for _, c := range choices {
				list = append(list, mapping("value", text(c.value), "title", text(c.title)))
			}
			f.Content = append(f.Content, mapping("choices", sequence(list...)).Content...)
		}
		fields = append(fields, f)
	}
	root.Content = append(root.Content, mapping("fields", sequence(fields...)).Content...)
	return root
}

func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// elicitShape is the guarded line of the request: the mode, and in URL
// mode the URL and its id, and anything else the request holds but the
// message and the schema.
func elicitShape(req map[string]any) string {
	rest := map[string]any{}
	for k, v := range req {
		if k != "message" && k != "requestedSchema" {
			rest[k] = v
		}
	}
	rest["mode"] = validate.ElicitationMode(req)
	return shapeLine(rest)
}

// fieldShape is the guarded line of a field: everything it holds but its
// texts (title, description, choice titles), and whether it is required.
func fieldShape(p map[string]any, required bool) string {
	shape := map[string]any{}
	for k, v := range p {
		if k != "title" && k != "description" && k != "enumNames" {
			shape[k] = untitled(v)
		}
	}
	if _, ok := p["enumNames"].([]any); !ok && p["enumNames"] != nil {
		shape["enumNames"] = p["enumNames"]
	}
	s := shapeLine(shape)
	if required {
		return s + " required"
	}
	return s + " optional"
}

// untitled is a oneOf/anyOf list (or an items object holding one) without
// its choices' titles, which are text.
func untitled(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if c, ok := e.(map[string]any); ok && hasAny(c, "const") {
				cc := map[string]any{}
				for k, val := range c {
					if k != "title" {
						cc[k] = val
					}
				}
				e = cc
			}
			out[i] = e
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if k == "oneOf" || k == "anyOf" {
				val = untitled(val)
			}
			out[k] = val
		}
		return out
	}
	return v
}

// shapeLine is v on one line as JSON (keys sorted), through inert so
// the document holds nothing obeyable.
func shapeLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(inert.JSON(b))
}

// titledChoice is a choice whose title is text the user reads.
type titledChoice struct {
	value, title string
	set          func(string) // writes an edited title into the request
}

// titledChoices are a property's titled choices, in order: enum with
// enumNames, oneOf/anyOf of const and title, and the same under items.
func titledChoices(p map[string]any) []titledChoice {
	var out []titledChoice
	if values, ok := p["enum"].([]any); ok {
		if names, ok := p["enumNames"].([]any); ok {
			for i := range min(len(values), len(names)) {
				if s, ok := names[i].(string); ok {
					out = append(out, titledChoice{shapeLine(values[i]), s, func(t string) { names[i] = t }})
				}
			}
		}
	}
	lists := []any{p["oneOf"], p["anyOf"]}
	if items, ok := p["items"].(map[string]any); ok {
		lists = append(lists, items["oneOf"], items["anyOf"])
	}
	for _, l := range lists {
		list, _ := l.([]any)
		for _, e := range list {
			c, _ := e.(map[string]any)
			if s, ok := c["title"].(string); ok && hasAny(c, "const") {
				out = append(out, titledChoice{shapeLine(c["const"]), s, func(t string) { c["title"] = t }})
			}
		}
	}
	return out
}

// applyElicit reads an edited elicitation document into the request,
// refusing any change of shape with the field and key that changed.
func applyElicit(raw json.RawMessage, obj map[string]any, buf []byte) (json.RawMessage, error) {
	var doc elicitDoc
	dec := yaml.NewDecoder(bytes.NewReader(buf))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("the edit is not a readable document (only message, and a field's title, description and choice titles, may change): %w", firstLine(err))
	}
	if doc.Shape != elicitShape(obj) {
		return nil, errors.New("the shape line changed: the mode, the URL and its id cannot be edited, only the message")
	}
	switch m, ok := obj["message"]; {
	case !ok && doc.Message == "":
	case !ok || m == nil:
		obj["message"] = doc.Message
	default:
		if _, isString := m.(string); isString {
			obj["message"] = doc.Message
		}
	}
	if validate.ElicitationMode(obj) == "url" {
		if len(doc.Fields) > 0 {
			return nil, errors.New("a URL request has no fields: only the message may change")
		}
		return json.Marshal(obj)
	}
	schema, _ := obj["requestedSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	names := propertyOrder(raw, props)
	if len(doc.Fields) != len(names) {
		return nil, fmt.Errorf("the form has %d fields and the edit %d: fields cannot be added or removed", len(names), len(doc.Fields))
	}
	required := requiredSet(schema["required"])
	for i, name := range names {
		p, _ := props[name].(map[string]any)
		if err := applyField(i+1, name, p, required[name], doc.Fields[i]); err != nil {
			return nil, err
		}
	}
	return marshalOrdered(obj, names)
}

// applyField writes one field's edited texts, after checking its name,
// shape and choice values are as they were.
func applyField(n int, name string, p map[string]any, required bool, f fieldDoc) error {
	at := fmt.Sprintf("field %d (%s)", n, inert.Quote(name))
	switch {
	case f.Name != name:
		return fmt.Errorf("%s: its name changed to %s: names cannot change, only title, description and choice titles", at, inert.Quote(f.Name))
	case p == nil:
		return nil
	case f.Shape != fieldShape(p, required):
		return fmt.Errorf("%s: its shape changed (%s): type, constraints, default, choice values and required cannot change", at, shapeDiff(fieldShape(p, required), f.Shape))
	}
	choices := titledChoices(p)
	if len(f.Choices) != len(choices) {
		return fmt.Errorf("%s has %d titled choices and the edit %d: choices cannot be added or removed", at, len(choices), len(f.Choices))
	}
	for j, c := range choices {
		switch e := f.Choices[j]; {
		case e.Value != c.value:
			return fmt.Errorf("%s, choice %d: its value changed: choice values cannot change, only their titles", at, j+1)
		case e.Title == nil:
			return fmt.Errorf("%s, choice %d: its title is missing: a choice keeps its title (it may be changed)", at, j+1)
		default:
			c.set(*e.Title)
		}
	}
	setText(p, "title", f.Title)
	setText(p, "description", f.Description)
	return nil
}

// setText writes an edited text, dropping it when the edit removed it. A
// member of that name that is not a string is no text: the document does
// not show it, and it stays as it is.
func setText(p map[string]any, key string, s *string) {
	if v, ok := p[key]; ok {
		if _, isString := v.(string); !isString {
			return
		}
	}
	if s == nil {
		delete(p, key)
	} else {
		p[key] = *s
	}
}

// shapeDiff names the keys of a field's shape line that differ, as far as
// both read as JSON objects; else it says the line was edited.
func shapeDiff(was, now string) string {
	var a, b map[string]any
	wasObj, _, _ := strings.Cut(was, "} ")
	nowObj, _, _ := strings.Cut(now, "} ")
	if json.Unmarshal([]byte(wasObj+"}"), &a) != nil || json.Unmarshal([]byte(nowObj+"}"), &b) != nil {
		return "the line was edited"
	}
	var keys []string
	for k := range a {
		if !equalJSONValues(a[k], b[k]) {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "required/optional"
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = inert.Word(k)
	}
	return strings.Join(keys, ", ")
}

func equalJSONValues(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// marshalOrdered encodes the request with its properties in their
// original order (json.Marshal sorts a map's keys, and a host shows the
// fields in the order written).
func marshalOrdered(obj map[string]any, names []string) (json.RawMessage, error) {
	schema, _ := obj["requestedSchema"].(map[string]any)
	props, isMap := schema["properties"].(map[string]any)
	if !isMap {
		return json.Marshal(obj)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, name := range names {
		k, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(props[name])
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	schema["properties"] = json.RawMessage(b.Bytes())
	defer func() { schema["properties"] = props }()
	return json.Marshal(obj)
}

// firstLine is err's first line: yaml's errors list every problem on
// lines of their own. It is through inert.Line: yaml quotes the start of
// a value it could not read, and the document holds what the upstream
// wrote.
func firstLine(err error) error {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if more := strings.Count(err.Error(), "\n"); more > 0 {
		s = strings.TrimSpace(s + " " + strings.TrimSpace(strings.SplitN(err.Error(), "\n", 3)[1]))
	}
	return errors.New(inert.Line(s))
}

// elicitKeys are the keys each level of the document may hold.
var elicitKeys = struct{ root, field, choice []string }{
	root:   []string{"message", "shape", "fields"},
	field:  []string{"name", "shape", "title", "description", "choices"},
	choice: []string{"value", "title"},
}

// checkElicitKeys refuses a document holding a key the edit cannot take
// (a "type" or "enum" added to a field, say), naming the key, its line and
// what may change; a document that does not parse is left to the decoder.
func checkElicitKeys(buf []byte) error {
	var doc yaml.Node
	if yaml.Unmarshal(buf, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if err := checkKeys(root, elicitKeys.root, "the document", "only the message and the fields' texts may change"); err != nil {
		return err
	}
	for _, f := range seqAt(root, "fields") {
		if err := checkKeys(f, elicitKeys.field, "a field", "a field's shape cannot change, only its title, description and choice titles"); err != nil {
			return err
		}
		for _, c := range seqAt(f, "choices") {
			if err := checkKeys(c, elicitKeys.choice, "a choice", "only a choice's title may change"); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkKeys(n *yaml.Node, allowed []string, where, what string) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(allowed, k.Value) {
			return fmt.Errorf("line %d: %s cannot hold %s: %s", k.Line, where, inert.Quote(k.Value), what)
		}
	}
	return nil
}

// seqAt is the items of the sequence under key in mapping n.
func seqAt(n *yaml.Node, key string) []*yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.SequenceNode {
			return n.Content[i+1].Content
		}
	}
	return nil
}
