package render

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// gutterMark starts every line of prose an upstream wrote (a prompt, a
// message's text, a tool's description, a resource's text). show's own
// lines never start with it, so text cannot pass for them: a line in a
// prompt that reads "[tool_result for call-1]" or "To decide" shows behind
// the mark, and newlines cannot be used to draw a review of one's own.
const gutterMark = "│"

// gutter lays out prose as lines behind the gutter mark, through
// inert.Text.
func gutter(s string) []string {
	lines := strings.Split(inert.Text(s), "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = gutterMark
		} else {
			lines[i] = gutterMark + " " + l
		}
	}
	return lines
}

// contentView lays out the content of a message or a tool result, block
// by block. It touches nothing but the fold count of its view.
type contentView struct{ *view }

// blockFirst is the order in which a block's members are shown before the
// others (sorted): what names and describes it, then what qualifies it.
var blockFirst = []string{"name", "title", "description", "mimeType", "size", "structuredContent", "annotations"}

// blocks lays out a message's (or tool result's) content: one block or a
// list of them, or as a value whatever stands where blocks belong.
func (v contentView) blocks(content any) []string {
	switch c := content.(type) {
	case nil:
		return nil
	case map[string]any:
		return v.block(c)
	case []any:
		var out []string
		for _, e := range c {
			if b, ok := e.(map[string]any); ok {
				out = append(out, v.block(b)...)
			} else {
				out = append(out, v.member("[not a block]", "", e, 1)...)
			}
		}
		return out
	}
	return v.member("[content]", "content", content, 1)
}

// block lays out one content block readably: text as text, media as type
// and size (never the bytes), tool calls and results with their ids,
// embedded resources with their text; then every member it has that the
// layout did not show, so nothing the model gets is left out.
func (v contentView) block(b map[string]any) []string {
	switch b["type"] {
	case "text":
		if s, ok := b["text"].(string); ok {
			return v.text(b, s)
		}
	case "image", "audio":
		head := fmt.Sprintf("[%v %s, %d bytes]", b["type"], v.word(b["mimeType"]), decodedSize(b["data"]))
		return v.headed(head, b, nil, "type", "mimeType", "data")
	case "tool_use":
		return v.toolUse(b)
	case "tool_result":
		return v.toolResult(b)
	case "resource":
		if r, ok := b["resource"].(map[string]any); ok {
			return v.resource(b, r)
		}
	case "resource_link":
		return v.headed(fmt.Sprintf("[resource_link %s]", v.word(b["uri"])), b, nil, "type", "uri")
	}
	return v.headed(fmt.Sprintf("[%s]", v.word(b["type"])), b, nil, "type")
}

// headed is a block's head line, then its body and its members but skip,
// indented under it.
func (v contentView) headed(head string, b map[string]any, body []string, skip ...string) []string {
	out := append([]string{head}, indentLines(body, "  ")...)
	return append(out, indentLines(v.members(b, blockFirst, skip...), "  ")...)
}

// text is a text block: its text alone, or under a [text] head when the
// block has more (annotations, _meta).
func (v contentView) text(b map[string]any, s string) []string {
	if len(b) == 2 {
		return gutter(s)
	}
	return v.headed("[text]", b, gutter(s), "type", "text")
}

// toolUse is a tool call: the tool, the call's id and its input whole.
func (v contentView) toolUse(b map[string]any) []string {
	head := fmt.Sprintf("[tool_use %s id=%s] input", v.word(b["name"]), v.word(b["id"]))
	out := v.member(head, "input", b["input"], 0)
	return append(out, indentLines(v.members(b, blockFirst, "type", "name", "id", "input"), "  ")...)
}

// toolResult is a tool's result: the call it answers, whether it failed,
// its content blocks, then its structured content and the rest.
func (v contentView) toolResult(b map[string]any) []string {
	head := fmt.Sprintf("[tool_result for %s%s]", v.word(b["toolUseId"]), errorMark(b))
	skip := []string{"type", "toolUseId", "content"}
	if _, ok := b["isError"].(bool); ok {
		skip = append(skip, "isError")
	}
	return v.headed(head, b, v.blocks(b["content"]), skip...)
}

func errorMark(b map[string]any) string {
	if e, _ := b["isError"].(bool); e {
		return ", error"
	}
	return ""
}

// resource is an embedded resource: its URI and type, its text whole (or
// the size of its blob), then the rest of it and of the block.
func (v contentView) resource(b, r map[string]any) []string {
	head := "[resource " + v.word(r["uri"])
	if m, ok := r["mimeType"]; ok {
		head += ", " + v.word(m)
	}
	var body []string
	shown := []string{"uri", "mimeType"}
	if s, ok := r["text"].(string); ok {
		body, shown = gutter(s), append(shown, "text")
	}
	if s, ok := r["blob"].(string); ok {
		body, shown = append(body, fmt.Sprintf("[blob, %d bytes]", decodedSize(s))), append(shown, "blob")
	}
	for _, k := range orderedKeys(r, nil, shown) {
		body = append(body, v.member("resource."+inert.Word(k), k, r[k], 1)...)
	}
	return v.headed(head+"]", b, body, "type", "resource")
}

// decodedSize is the size of base64 media in bytes, exact when it decodes.
func decodedSize(data any) int {
	s, _ := data.(string)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return len(b)
	}
	return base64.StdEncoding.DecodedLen(len(s))
}

// ContentBlocks is content as a list of block objects: one block, or the
// objects of a list.
func ContentBlocks(c any) []map[string]any {
	switch v := c.(type) {
	case map[string]any:
		return []map[string]any{v}
	case []any:
		var out []map[string]any
		for _, b := range v {
			if m, ok := b.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}
