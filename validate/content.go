package validate

import "fmt"

// typeSet is the set of content block types allowed at one position.
type typeSet map[string]bool

// knownTypes is every content block type of any era. A type outside it is
// unknown; a type inside it may still be out of place (wrong era, or a
// resource at the top level of a message).
var knownTypes = typeSet{"text": true, "image": true, "audio": true,
	"tool_use": true, "tool_result": true, "resource_link": true, "resource": true}

// nestedTypes are the types allowed inside tool_result.content
// (ContentBlock): never tool_use or tool_result.
var nestedTypes = typeSet{"text": true, "image": true, "audio": true,
	"resource_link": true, "resource": true}

// requestTypes are the types a request message may hold in era e
// (the schema's SamplingMessage content of each era): text and image always, audio from 2025-03-26,
// tool_use and tool_result from 2025-11-25. Resources never at top level.
func requestTypes(e *eraFeatures) typeSet {
	s := typeSet{"text": true, "image": true, "audio": e.audio}
	if e.tools {
		s["tool_use"], s["tool_result"] = true, true
	}
	return s
}

// resultTypes are the types a completion may hold in era e (schema
// CreateMessageResult; C1): like a request but never tool_result.
func resultTypes(e *eraFeatures) typeSet {
	s := requestTypes(e)
	delete(s, "tool_result")
	return s
}

// content checks the content member of a message or result, whose
// pointer is path: one block object, or from 2025-11-25 on a non-empty
// array of blocks.
func (c *checker) content(path string, msg map[string]any, allowed typeSet) {
	v, ok := msg["content"]
	if !ok {
		c.add(ruleContentEra, path, "content is missing")
		return
	}
	switch x := v.(type) {
	case map[string]any:
		c.block(path, x, allowed)
	case []any:
		c.blockArray(path, x, allowed)
	default:
		c.add(ruleContentEra, path, "content must be a content block, got %s", kindOf(v))
	}
}

// blockArray checks an array of content blocks. Before 2025-11-25 an array
// is itself a violation (V4, doc.go); its blocks are still checked so
// every problem shows.
func (c *checker) blockArray(path string, list []any, allowed typeSet) {
	switch {
	case !c.era.tools:
		c.add(ruleContentEra, path, "content must be a single block in %s, got an array", c.era.name)
	case len(list) == 0:
		c.add(ruleContentEra, path, "content array is empty")
	}
	for i, b := range c.capBlocks(path, list) {
		c.block(index(path, i), b, allowed)
	}
}

// capBlocks reports a list longer than the block limit and returns the
// part that will be checked.
func (c *checker) capBlocks(path string, list []any) []any {
	if len(list) > c.lim.MaxBlocks {
		c.add(ruleLimitBlocks, path, "%d content blocks, limit %d", len(list), c.lim.MaxBlocks)
		return list[:c.lim.MaxBlocks]
	}
	return list
}

// block checks one content block whose type must be in allowed, then its
// shape.
func (c *checker) block(path string, v any, allowed typeSet) {
	b, ok := v.(map[string]any)
	if !ok {
		c.add(ruleBlock, path, "content block must be an object, got %s", kindOf(v))
		return
	}
	if !c.required(ruleBlock, path, b, "type", kindString) {
		return
	}
	typ := b["type"].(string)
	if !allowed[typ] {
		c.add(ruleBlockType, path+"/type", "%s", misplaced(typ, c.era.name))
		return
	}
	c.blockShape(path, typ, b)
}

// misplaced explains why a block type is not allowed where it stands.
func misplaced(typ string, era Era) string {
	switch {
	case !knownTypes[typ]:
		return fmt.Sprintf("unknown content type %s", quote(typ))
	case typ == "resource" || typ == "resource_link":
		return fmt.Sprintf("%s content is allowed only inside a tool_result", typ)
	}
	return fmt.Sprintf("%s content is not allowed here in %s", typ, era)
}

// blockShape dispatches to the check for one block type.
func (c *checker) blockShape(path, typ string, b map[string]any) {
	switch typ {
	case "text":
		c.textBlock(path, b)
	case "image", "audio":
		c.mediaBlock(path, typ, b)
	case "tool_use":
		c.toolUseBlock(path, b)
	case "tool_result":
		c.toolResultBlock(path, b)
	case "resource_link":
		c.resourceLink(path, b)
	case "resource":
		c.embeddedResource(path, b)
	}
}
