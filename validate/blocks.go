package validate

import (
	"encoding/base64"
	"strings"
)

// The shapes of the individual content blocks (SPEC-NOTES §1.4). Every
// block is closed: a member the schema does not define is reported.

// textBlock checks TextContent.
func (c *checker) textBlock(path string, b map[string]any) {
	c.unknownKeys(path, b, keys("type", "text", "annotations", "_meta"))
	if c.required(ruleBlock, path, b, "text", kindString) {
		c.text(path+"/text", b["text"].(string))
	}
	c.annotations(path, b)
	c.meta(path, b)
}

// mediaBlock checks ImageContent and AudioContent: base64 data and a MIME
// type of the matching family.
func (c *checker) mediaBlock(path, typ string, b map[string]any) {
	c.unknownKeys(path, b, keys("type", "data", "mimeType", "annotations", "_meta"))
	if c.required(ruleBlock, path, b, "data", kindString) {
		c.base64(path+"/data", b["data"].(string))
	}
	if c.required(ruleMimeType, path, b, "mimeType", kindString) {
		c.mimeType(path+"/mimeType", typ, b["mimeType"].(string))
	}
	c.annotations(path, b)
	c.meta(path, b)
}

// toolUseBlock checks ToolUseContent. Pairing and tool names are checked
// across messages, in pairing.go.
func (c *checker) toolUseBlock(path string, b map[string]any) {
	c.unknownKeys(path, b, keys("type", "id", "name", "input", "_meta"))
	c.nonEmpty(ruleToolUse, path, b, "id")
	c.nonEmpty(ruleToolUse, path, b, "name")
	c.required(ruleToolUse, path, b, "input", kindObject)
	c.meta(path, b)
}

// toolResultBlock checks ToolResultContent. Its content is upstream
// controlled text that reaches the host's model, so it gets the same block
// checks as the messages themselves.
func (c *checker) toolResultBlock(path string, b map[string]any) {
	c.unknownKeys(path, b, keys("type", "toolUseId", "content", "structuredContent", "isError", "_meta"))
	c.nonEmpty(ruleToolResult, path, b, "toolUseId")
	if c.required(ruleToolResult, path, b, "content", kindArray) {
		inner := path + "/content"
		for i, nb := range c.capBlocks(inner, b["content"].([]any)) {
			c.block(index(inner, i), nb, nestedTypes)
		}
	}
	if !c.era.anyStructured {
		c.optional(ruleToolResult, path, b, "structuredContent", kindObject)
	}
	c.optional(ruleToolResult, path, b, "isError", kindBool)
	c.meta(path, b)
}

// resourceLink checks ResourceLink, allowed only inside a tool_result.
func (c *checker) resourceLink(path string, b map[string]any) {
	c.unknownKeys(path, b, keys("type", "uri", "name", "title", "description",
		"mimeType", "annotations", "size", "icons", "_meta"))
	c.nonEmpty(ruleResource, path, b, "uri")
	c.required(ruleResource, path, b, "name", kindString)
	for _, k := range []string{"title", "description", "mimeType"} {
		c.optional(ruleResource, path, b, k, kindString)
	}
	c.optional(ruleResource, path, b, "size", kindNumber)
	c.optional(ruleResource, path, b, "icons", kindArray)
	c.annotations(path, b)
	c.meta(path, b)
}

// embeddedResource checks EmbeddedResource, allowed only inside a
// tool_result.
func (c *checker) embeddedResource(path string, b map[string]any) {
	c.unknownKeys(path, b, keys("type", "resource", "annotations", "_meta"))
	if c.required(ruleResource, path, b, "resource", kindObject) {
		c.resourceContents(path+"/resource", b["resource"].(map[string]any))
	}
	c.annotations(path, b)
	c.meta(path, b)
}

// resourceContents checks TextResourceContents or BlobResourceContents:
// a uri and exactly one of text and blob.
func (c *checker) resourceContents(path string, r map[string]any) {
	c.unknownKeys(path, r, keys("uri", "mimeType", "text", "blob", "_meta"))
	c.nonEmpty(ruleResource, path, r, "uri")
	c.optional(ruleResource, path, r, "mimeType", kindString)
	if has(r, "text") == has(r, "blob") {
		c.add(ruleResource, path, "resource must have exactly one of text and blob")
	}
	if c.optional(ruleResource, path, r, "text", kindString) {
		c.text(path+"/text", r["text"].(string))
	}
	if c.optional(ruleResource, path, r, "blob", kindString) {
		c.base64(path+"/blob", r["blob"].(string))
	}
	c.meta(path, r)
}

// annotations checks the optional Annotations of a block: audience roles
// and a priority in 0..1.
func (c *checker) annotations(path string, b map[string]any) {
	if !c.optional(ruleAnnotations, path, b, "annotations", kindObject) {
		return
	}
	path += "/annotations"
	a := b["annotations"].(map[string]any)
	c.unknownKeys(path, a, keys("audience", "priority", "lastModified"))
	if c.optional(ruleAnnotations, path, a, "audience", kindArray) {
		for i, r := range a["audience"].([]any) {
			if r != "user" && r != "assistant" {
				c.add(ruleAnnotations, index(path+"/audience", i), "audience entries must be \"user\" or \"assistant\"")
			}
		}
	}
	if v, ok := a["priority"]; ok && !unit(v) {
		c.add(ruleAnnotations, path+"/priority", "priority must be a number in 0..1")
	}
	c.optional(ruleAnnotations, path, a, "lastModified", kindString)
}

// strictBase64 decodes standard base64 with padding, rejecting non-zero
// padding bits, so one payload has one spelling.
var strictBase64 = base64.StdEncoding.Strict()

// base64 checks that s is standard, padded base64 within the size limit.
// Line breaks, which the decoder would skip, are refused too: what is
// forwarded must be exactly what was checked.
func (c *checker) base64(path, s string) {
	if len(s) > c.lim.MaxBase64Bytes {
		c.add(ruleLimitBase64, path, "%d bytes of base64, limit %d", len(s), c.lim.MaxBase64Bytes)
		return
	}
	if strings.ContainsAny(s, "\r\n") {
		c.add(ruleBase64, path, "base64 data contains a line break")
		return
	}
	if _, err := strictBase64.DecodeString(s); err != nil {
		c.add(ruleBase64, path, "data is not valid base64: %v", err)
	}
}

// mimeType checks that an image carries an image/* type and audio an
// audio/* type. Which subtypes are acceptable is policy.
func (c *checker) mimeType(path, typ, m string) {
	family, sub, ok := strings.Cut(strings.ToLower(m), "/")
	if !ok || family != typ || sub == "" || strings.ContainsFunc(m, isControl) {
		c.add(ruleMimeType, path, "%s content needs a mimeType of the form %s/*, got %s", typ, typ, quote(m))
	}
}

// isControl reports ASCII control characters, which have no place in a
// MIME type.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f
}
