package validate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The shapes of the individual content blocks (the content block types of the schema). Every
// block is closed: a member the schema does not define is reported.

// Member names of each block type. The text, image and audio blocks of
// 2024-11-05 and 2025-03-26 have no _meta, and their annotations no
// lastModified (schema-2024-11-05 TextContent, schema-2025-03-26
// Annotations); both arrive in 2025-06-18.
var (
	textKeys          = keys("type", "text", "annotations")
	textKeysMeta      = textKeys.with("_meta")
	mediaKeys         = keys("type", "data", "mimeType", "annotations")
	mediaKeysMeta     = mediaKeys.with("_meta")
	toolUseKeys       = keys("type", "id", "name", "input", "_meta")
	toolResultKeys    = keys("type", "toolUseId", "content", "structuredContent", "isError", "_meta")
	resourceLinkKeys  = keys("type", "uri", "name", "title", "description", "mimeType", "annotations", "size", "icons", "_meta")
	embeddedKeys      = keys("type", "resource", "annotations", "_meta")
	resourceKeys      = keys("uri", "mimeType", "text", "blob", "_meta")
	annotationKeys    = keys("audience", "priority")
	annotationKeysMod = annotationKeys.with("lastModified")
)

// textBlock checks TextContent.
func (c *checker) textBlock(path string, b map[string]any) {
	c.unknownKeys(path, b, c.pick(textKeys, textKeysMeta))
	if c.required(ruleBlock, path, b, "text", kindString) {
		c.text(path, "text", b["text"].(string))
	}
	c.annotations(path, b)
	c.blockMeta(path, b)
}

// mediaBlock checks ImageContent and AudioContent: base64 data and a MIME
// type of the matching family.
func (c *checker) mediaBlock(path, typ string, b map[string]any) {
	c.unknownKeys(path, b, c.pick(mediaKeys, mediaKeysMeta))
	if c.required(ruleBlock, path, b, "data", kindString) {
		c.base64(path, "data", b["data"].(string))
	}
	if c.required(ruleMimeType, path, b, "mimeType", kindString) {
		c.mimeType(path, typ, b["mimeType"].(string))
	}
	c.annotations(path, b)
	c.blockMeta(path, b)
}

// pick returns the key set of the era: with is for eras that allow _meta
// on blocks.
func (c *checker) pick(without, with keySet) keySet {
	if c.era.blockMeta {
		return with
	}
	return without
}

// blockMeta checks the _meta of a text, image or audio block in the eras
// that have it; earlier it is an unknown key, reported once as such.
func (c *checker) blockMeta(path string, b map[string]any) {
	if c.era.blockMeta {
		c.meta(path, b)
	}
}

// toolUseBlock checks ToolUseContent. Pairing and tool names are checked
// across messages, in pairing.go.
func (c *checker) toolUseBlock(path string, b map[string]any) {
	c.unknownKeys(path, b, toolUseKeys)
	c.nonEmpty(ruleToolUse, path, b, "id")
	c.nonEmpty(ruleToolUse, path, b, "name")
	c.required(ruleToolUse, path, b, "input", kindObject)
	c.meta(path, b)
}

// toolResultBlock checks ToolResultContent. Its content is upstream
// controlled text that reaches the host's model, so it gets the same block
// checks as the messages themselves.
func (c *checker) toolResultBlock(path string, b map[string]any) {
	c.unknownKeys(path, b, toolResultKeys)
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
	c.unknownKeys(path, b, resourceLinkKeys)
	c.nonEmpty(ruleResource, path, b, "uri")
	c.required(ruleResource, path, b, "name", kindString)
	for _, k := range []string{"title", "description", "mimeType"} {
		c.optional(ruleResource, path, b, k, kindString)
	}
	c.size(path, b)
	c.icons(ruleResource, path, b)
	c.annotations(path, b)
	c.meta(path, b)
}

// size checks a resource link's optional size: a count of bytes, so a
// plain non-negative integer that fits an int64, which is how MCP SDKs
// read it (1.5 or 1e3 would make one refuse the whole request).
func (c *checker) size(path string, b map[string]any) {
	if !c.optional(ruleResource, path, b, "size", kindNumber) {
		return
	}
	n := string(b["size"].(json.Number))
	if _, err := strconv.ParseInt(n, 10, 64); err != nil || !byteCount.MatchString(n) {
		c.add(ruleResource, child(path, "size"), "size must be a whole number of bytes, got %s", quote(n))
	}
}

// byteCount is the spelling of a size: a decimal integer without sign,
// fraction or exponent.
var byteCount = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// embeddedResource checks EmbeddedResource, allowed only inside a
// tool_result.
func (c *checker) embeddedResource(path string, b map[string]any) {
	c.unknownKeys(path, b, embeddedKeys)
	if c.required(ruleResource, path, b, "resource", kindObject) {
		c.resourceContents(path+"/resource", b["resource"].(map[string]any))
	}
	c.annotations(path, b)
	c.meta(path, b)
}

// resourceContents checks TextResourceContents or BlobResourceContents:
// a uri and exactly one of text and blob.
func (c *checker) resourceContents(path string, r map[string]any) {
	c.unknownKeys(path, r, resourceKeys)
	c.nonEmpty(ruleResource, path, r, "uri")
	c.optional(ruleResource, path, r, "mimeType", kindString)
	if has(r, "text") == has(r, "blob") {
		c.add(ruleResource, path, "resource must have exactly one of text and blob")
	}
	if c.optional(ruleResource, path, r, "text", kindString) {
		c.text(path, "text", r["text"].(string))
	}
	if c.optional(ruleResource, path, r, "blob", kindString) {
		c.base64(path, "blob", r["blob"].(string))
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
	c.unknownKeys(path, a, c.pick(annotationKeys, annotationKeysMod))
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
	if c.era.blockMeta {
		c.optional(ruleAnnotations, path, a, "lastModified", kindString)
	}
}

// base64 checks that s, member key of the block at path, is canonical
// base64 within the size limit.
func (c *checker) base64(path, key, s string) {
	if len(s) > c.lim.MaxBase64Bytes {
		c.add(ruleLimitBase64, child(path, key), "%d bytes of base64, limit %d", len(s), c.lim.MaxBase64Bytes)
		return
	}
	if problem := base64Problem(s); problem != "" {
		c.add(ruleBase64, child(path, key), "%s", problem)
	}
}

// base64Problem says why s is not canonical base64, or returns "" when it
// is. Canonical is what base64.StdEncoding.Strict() decodes: the standard
// alphabet, padded to a multiple of four, with zero padding bits, so one
// payload has one spelling; and without the line breaks that decoder
// skips, because what is forwarded must be exactly what was checked. It
// reads s in place: a payload of megabytes costs no allocation.
func base64Problem(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return "base64 data contains a line break"
	}
	if len(s)%4 != 0 {
		return fmt.Sprintf("base64 data is %d bytes long, not a multiple of 4", len(s))
	}
	pad := 0
	switch {
	case strings.HasSuffix(s, "=="):
		pad = 2
	case strings.HasSuffix(s, "="):
		pad = 1
	}
	body := s[:len(s)-pad]
	for i := range len(body) {
		if base64Value[body[i]] < 0 {
			return fmt.Sprintf("illegal base64 data at byte %d", i)
		}
	}
	if pad > 0 {
		unused := byte(0x0f) // "xx==" leaves 4 bits of the second digit unused
		if pad == 1 {
			unused = 0x03 // "xxx=" leaves 2 bits of the third digit unused
		}
		if byte(base64Value[body[len(body)-1]])&unused != 0 {
			return "base64 data has non-zero padding bits"
		}
	}
	return ""
}

// base64Value maps a byte to its value in the standard base64 alphabet,
// or -1.
var base64Value = func() (t [256]int8) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range t {
		t[i] = -1
	}
	for i := range len(alphabet) {
		t[alphabet[i]] = int8(i)
	}
	return t
}()

// mimeType checks that an image (block at path) carries an image/* type
// and audio an audio/* type. Which subtypes are acceptable is policy.
func (c *checker) mimeType(path, typ, m string) {
	family, sub, ok := strings.Cut(strings.ToLower(m), "/")
	if !ok || family != typ || sub == "" || strings.ContainsFunc(m, notPrintableASCII) {
		c.add(ruleMimeType, path+"/mimeType", "%s content needs a mimeType of the form %s/*, got %s", typ, typ, quote(m))
	}
}

// notPrintableASCII reports control characters and anything beyond
// ASCII, which have no place in a MIME type (RFC 6838 §4.2, RFC 2045
// §5.1): a direction override could make "image/png" show as another
// type in a reviewer's terminal.
func notPrintableASCII(r rune) bool {
	return r < 0x20 || r >= 0x7f
}
