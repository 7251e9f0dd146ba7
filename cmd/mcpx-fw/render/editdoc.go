package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// The edit document is what `review approve --edit` opens in the editor:
// YAML, because multi-line prompt text reads and edits naturally in a
// literal block. Only text is Editable. Blocks the operator must not
// change (tool calls, tool results, images, audio) appear as "guarded"
// lines for context; the edit is applied to the original JSON, so nothing
// outside the Editable fields can change, whatever the buffer says.
//
// The file holds no raw control or invisible character (the editor is a
// terminal program too): a string holding one is written double-quoted,
// where YAML has escapes (\e, \t, \u202e, \U000e0041), and the encoded
// document goes through inert's sink, which writes as such an escape each
// character the encoder left raw. Inside a double-quoted scalar the escape
// means the character it replaced, so an unchanged document reads back as
// the original, byte for byte.

// requestDoc is the Editable part of a sampling request.
type requestDoc struct {
	SystemPrompt  string       `yaml:"systemPrompt"`
	MaxTokens     int64        `yaml:"maxTokens"`
	StopSequences []string     `yaml:"stopSequences"`
	Messages      []messageDoc `yaml:"messages"`
}

type messageDoc struct {
	Role    string     `yaml:"role"`
	Content []blockDoc `yaml:"content"`
}

// blockDoc is one content block: Editable text, or a guarded rendering of
// anything else.
type blockDoc struct {
	Text    *string `yaml:"text,omitempty"`
	Guarded *string `yaml:"guarded,omitempty"`
}

// resultDoc is the Editable part of a completion.
type resultDoc struct {
	Content []blockDoc `yaml:"content"`
}

const requestHelp = `Edit the request held by review %s (server %s, %s) before approving it.
You may change systemPrompt, maxTokens, stopSequences and every "text".
"guarded" blocks (tool calls, tool results, images, audio) are shown for
context and must stay as they are; so must the roles and the number of
messages and blocks. Save and quit to approve your edit; leave it unchanged
to approve the request as it is; empty the file to cancel.`

const resultHelp = `Edit the completion held by review %s (server %s, %s) before approving it.
Role %s, model %s, stopReason %s. You may change every "text" (to redact or
correct it); "guarded" blocks (tool calls, images, audio) must stay as they
are. Save and quit to approve your edit; leave it unchanged to approve the
completion as it is; empty the file to cancel.`

// EditDoc renders the Editable document for it: its request, or its
// completion at the result stage, under a comment saying what may change.
// value is the JSON to render (the item's own, or an edit of it).
func EditDoc(it review.Item, value json.RawMessage) ([]byte, error) {
	return renderEditDoc(it, value, true)
}

// EditBody is EditDoc without the comment: what a diff compares.
func EditBody(it review.Item, value json.RawMessage) ([]byte, error) {
	return renderEditDoc(it, value, false)
}

func renderEditDoc(it review.Item, value json.RawMessage, help bool) ([]byte, error) {
	obj, err := decodeJSON(value)
	if err != nil {
		return nil, err
	}
	var root *yaml.Node
	var v view
	if err := EditRefusal(it); err != nil {
		return nil, err
	}
	switch {
	case ItemKind(it) == engine.KindElicitation:
		root = elicitNode(it, value, obj)
	case it.Stage == review.StageResult:
		root = mapping("content", blocksNode(obj["content"]))
		root.HeadComment = fmt.Sprintf(resultHelp, inert.Word(it.ID), inert.Line(it.Server), inert.Line(it.Label),
			v.word(obj["role"]), v.word(orNone(obj["model"])), v.word(orNone(obj["stopReason"])))
	default:
		root = requestNode(obj)
		root.HeadComment = fmt.Sprintf(requestHelp, inert.Word(it.ID), inert.Line(it.Server), inert.Line(it.Label))
	}
	if !help {
		root.HeadComment = ""
	}
	var b bytes.Buffer
	sink := inert.NewWriter(&b)
	enc := yaml.NewEncoder(sink)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := errors.Join(enc.Close(), sink.Flush()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func requestNode(req map[string]any) *yaml.Node {
	sp, _ := req["systemPrompt"].(string)
	var stops []*yaml.Node
	seqOf, _ := req["stopSequences"].([]any)
	for _, s := range seqOf {
		stops = append(stops, text(fmt.Sprint(s)))
	}
	var msgs []*yaml.Node
	list, _ := req["messages"].([]any)
	for _, m := range list {
		msg, _ := m.(map[string]any)
		msgs = append(msgs, mapping("role", text(fmt.Sprint(msg["role"])), "content", blocksNode(msg["content"])))
	}
	return mapping("systemPrompt", text(sp),
		"maxTokens", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(req["maxTokens"])},
		"stopSequences", sequence(stops...), "messages", sequence(msgs...))
}

func blocksNode(content any) *yaml.Node {
	var out []*yaml.Node
	for _, b := range ContentBlocks(content) {
		if b["type"] == "text" {
			s, _ := b["text"].(string)
			out = append(out, mapping("text", text(s)))
			continue
		}
		out = append(out, mapping("guarded", text(guardedLine(b))))
	}
	return sequence(out...)
}

// guardedLine is how a block the operator may not edit reads in the
// document (as show lays it out, on one line), and what it is compared
// with when the buffer comes back.
func guardedLine(b map[string]any) string {
	lines := contentView{new(view)}.block(b)
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}

// text is a string scalar: double-quoted when it holds a character that
// must be escaped (see the top of this file), else a literal block when it
// spans lines, so prompt text reads as written; YAML itself falls back to
// a quoted form when a literal block cannot hold the text exactly.
func text(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	switch {
	case !inert.Clean(s):
		n.Style = yaml.DoubleQuotedStyle
	case strings.Contains(s, "\n"):
		n.Style = yaml.LiteralStyle
	}
	return n
}

func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < len(kv); i += 2 {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: kv[i].(string)}, kv[i+1].(*yaml.Node))
	}
	return n
}

func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

// ApplyEdit reads an edited document and applies it to the original value
// of it, returning the new JSON. Anything outside the Editable fields that
// differs is refused, naming where.
func ApplyEdit(it review.Item, original json.RawMessage, buf []byte) (json.RawMessage, error) {
	obj, err := decodeJSON(original)
	if err != nil {
		return nil, err
	}
	if err := EditRefusal(it); err != nil {
		return nil, err
	}
	if ItemKind(it) == engine.KindElicitation {
		if err := checkElicitKeys(buf); err != nil {
			return nil, err
		}
		return applyElicit(original, obj, buf)
	}
	dec := yaml.NewDecoder(bytes.NewReader(buf))
	dec.KnownFields(true)
	if it.Stage == review.StageResult {
		var doc resultDoc
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("the edit is not a readable document: %w", firstLine(err))
		}
		err = applyBlocks("the completion", obj["content"], doc.Content)
	} else {
		var doc requestDoc
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("the edit is not a readable document: %w", firstLine(err))
		}
		err = applyRequest(obj, doc)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

func applyRequest(req map[string]any, doc requestDoc) error {
	if doc.MaxTokens <= 0 {
		return errors.New("maxTokens must be a positive whole number")
	}
	req["maxTokens"] = doc.MaxTokens
	setOrDrop(req, "systemPrompt", doc.SystemPrompt, doc.SystemPrompt != "")
	setOrDrop(req, "stopSequences", doc.StopSequences, len(doc.StopSequences) > 0)
	msgs, _ := req["messages"].([]any)
	if len(doc.Messages) != len(msgs) {
		return fmt.Errorf("the request has %d messages and the edit %d: messages cannot be added or removed, only their text changed",
			len(msgs), len(doc.Messages))
	}
	for i, m := range msgs {
		msg, _ := m.(map[string]any)
		where := fmt.Sprintf("message %d", i+1)
		if doc.Messages[i].Role != fmt.Sprint(msg["role"]) {
			return fmt.Errorf("%s: its role cannot change (%v)", where, msg["role"])
		}
		if err := applyBlocks(where, msg["content"], doc.Messages[i].Content); err != nil {
			return err
		}
	}
	return nil
}

func setOrDrop(obj map[string]any, key string, v any, keep bool) {
	if keep {
		obj[key] = v
	} else {
		delete(obj, key)
	}
}

// applyBlocks writes edited text into the original blocks (which content
// holds by reference) and checks that guarded blocks are untouched.
func applyBlocks(where string, content any, edited []blockDoc) error {
	blocks := ContentBlocks(content)
	if len(edited) != len(blocks) {
		return fmt.Errorf("%s has %d content blocks and the edit %d: blocks cannot be added or removed", where, len(blocks), len(edited))
	}
	for j, b := range blocks {
		e, at := edited[j], fmt.Sprintf("%s, block %d", where, j+1)
		switch {
		case b["type"] == "text" && e.Text != nil && e.Guarded == nil:
			b["text"] = *e.Text
		case b["type"] == "text":
			return fmt.Errorf("%s is text: edit it under \"text\"", at)
		case e.Guarded == nil || *e.Guarded != guardedLine(b) || e.Text != nil:
			return fmt.Errorf("%s is a guarded %v block: it is shown for context and cannot be edited", at, b["type"])
		}
	}
	return nil
}

// decodeJSON reads an object keeping numbers exact, so re-encoding it
// changes nothing but what the operator edited.
func decodeJSON(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the stored JSON is not an object: %v", err)
	}
	return obj, nil
}

// Editable is what an edit replaces: the request, or at the result stage
// the completion.
func Editable(it review.Item) json.RawMessage {
	if it.Stage == review.StageResult {
		return it.Result
	}
	return it.Request
}

// EqualJSON reports whether a and b hold the same JSON value: an edit
// that leaves it so changed nothing.
func EqualJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
