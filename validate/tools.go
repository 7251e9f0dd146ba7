package validate

// toolKeys are the members of a Tool (schema Tool, 2025-11-25 and
// 2026-07-28 together: execution exists only in the former but is harmless).
var toolKeys = keys("name", "title", "description", "inputSchema", "outputSchema",
	"annotations", "icons", "execution", "_meta")

// toolMembers are the optional Tool members whose JSON type is checked;
// their contents are the upstream's business and the host's to interpret.
var toolMembers = []struct {
	key  string
	kind jsonKind
}{
	{"title", kindString}, {"description", kindString}, {"outputSchema", kindObject},
	{"annotations", kindObject}, {"execution", kindObject},
}

// toolsAndChoice checks tools and toolChoice, which may only be sent to a
// client that declared sampling.tools (S1125 §Tools in Sampling): the firewall
// must refuse them when it did not advertise the capability upstream.
func (c *checker) toolsAndChoice(doc Document) {
	for _, k := range []string{"tools", "toolChoice"} {
		if has(doc, k) && !c.caps.Tools {
			c.add(ruleToolsCapability, "/"+k, "%s needs the sampling.tools capability", k)
		}
	}
	if c.optional(ruleTools, "", doc, "tools", kindArray) {
		c.tools(doc["tools"].([]any))
	}
	if c.optional(ruleToolChoice, "", doc, "toolChoice", kindObject) {
		c.toolChoice(doc["toolChoice"].(map[string]any))
	}
}

// tools checks every tool definition, up to the tool limit. Names must be
// unique, or a tool_use could not say which tool it calls.
func (c *checker) tools(list []any) {
	if len(list) > c.lim.MaxTools {
		c.add(ruleLimitTools, "/tools", "%d tools, limit %d", len(list), c.lim.MaxTools)
		list = list[:c.lim.MaxTools]
	}
	seen := map[string]bool{}
	for i, t := range list {
		path := index("/tools", i)
		name, ok := c.tool(path, t)
		if ok && seen[name] {
			c.add(ruleTools, path+"/name", "tool name %s appears more than once", quote(name))
		}
		if ok {
			seen[name] = true
		}
	}
}

// tool checks one Tool and returns its name when it has a usable one.
func (c *checker) tool(path string, v any) (string, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		c.add(ruleTools, path, "tool must be an object, got %s", kindOf(v))
		return "", false
	}
	c.unknownKeys(path, t, toolKeys)
	c.meta(path, t)
	for _, m := range toolMembers {
		c.optional(ruleTools, path, t, m.key, m.kind)
	}
	c.toolAnnotations(path, t)
	c.icons(ruleTools, path, t)
	c.inputSchema(path, t)
	return c.nonEmpty(ruleTools, path, t, "name")
}

// toolHints are the ToolAnnotations members that are booleans.
var toolHints = []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// toolAnnotations checks the types of the ToolAnnotations members the
// schema defines. Other members are the host's to ignore, but a hint that
// is not a boolean is a message no MCP SDK decodes: it would refuse the
// whole request with an error of its own.
func (c *checker) toolAnnotations(path string, t map[string]any) {
	a, ok := t["annotations"].(map[string]any)
	if !ok {
		return
	}
	path += "/annotations"
	for _, k := range toolHints {
		c.optional(ruleTools, path, a, k, kindBool)
	}
	c.optional(ruleTools, path, a, "title", kindString)
}

// icons checks the optional icons of a tool or resource link: an array of
// Icon objects, each with a src, and typed as the schema types them, for
// the same reason as toolAnnotations.
func (c *checker) icons(id ruleID, path string, obj map[string]any) {
	if !c.optional(id, path, obj, "icons", kindArray) {
		return
	}
	for i, v := range obj["icons"].([]any) {
		at := index(path+"/icons", i)
		icon, ok := v.(map[string]any)
		if !ok {
			c.add(id, at, "icon must be an object, got %s", kindOf(v))
			continue
		}
		c.required(id, at, icon, "src", kindString)
		c.optional(id, at, icon, "mimeType", kindString)
		c.optional(id, at, icon, "theme", kindString)
		if c.optional(id, at, icon, "sizes", kindArray) {
			for j, s := range icon["sizes"].([]any) {
				if _, ok := s.(string); !ok {
					c.add(id, index(at+"/sizes", j), "icon size must be a string, got %s", kindOf(s))
				}
			}
		}
	}
}

// inputSchema checks that a tool's input schema is an object schema: tool
// arguments are always JSON objects, so the spec requires type "object".
func (c *checker) inputSchema(path string, t map[string]any) {
	if !c.required(ruleTools, path, t, "inputSchema", kindObject) {
		return
	}
	if typ, _ := t["inputSchema"].(map[string]any)["type"].(string); typ != "object" {
		c.add(ruleTools, path+"/inputSchema/type", "inputSchema.type must be \"object\"")
	}
}

// toolModes are the values toolChoice.mode may take.
var toolModes = map[string]bool{"auto": true, "required": true, "none": true}

// toolChoice checks the ToolChoice object.
func (c *checker) toolChoice(tc map[string]any) {
	const path = "/toolChoice"
	c.unknownKeys(path, tc, keys("mode"))
	if c.optional(ruleToolChoice, path, tc, "mode", kindString) {
		if m := tc["mode"].(string); !toolModes[m] {
			c.add(ruleToolChoice, path+"/mode", "mode must be auto, required or none, got %s", quote(m))
		}
	}
}

// nonEmpty checks that member key of obj is a non-empty string and returns
// it.
func (c *checker) nonEmpty(id ruleID, path string, obj map[string]any, key string) (string, bool) {
	if !c.required(id, path, obj, key, kindString) {
		return "", false
	}
	s := obj[key].(string)
	if s == "" {
		c.add(id, child(path, key), "%s is empty", key)
		return "", false
	}
	return s, true
}

// toolNames returns the names of the tools a request offers.
func toolNames(doc Document) map[string]bool {
	names := map[string]bool{}
	list, _ := doc["tools"].([]any)
	for _, t := range list {
		if tm, ok := t.(map[string]any); ok {
			if n, ok := tm["name"].(string); ok && n != "" {
				names[n] = true
			}
		}
	}
	return names
}

// toolMode returns the request's toolChoice.mode, "auto" by default.
func toolMode(doc Document) string {
	tc, _ := doc["toolChoice"].(map[string]any)
	if m, ok := tc["mode"].(string); ok {
		return m
	}
	return "auto"
}
