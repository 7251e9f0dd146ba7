package validate

// Result checks the raw JSON of a CreateMessageResult, the host's
// completion, against the request it answers (the Document Request
// returned; nil is read as a request without tools). It returns the parsed
// result and every violation in document order, like Request, and never
// panics.
func Result(raw []byte, request Document, opt Options) (Document, []Violation) {
	c := newChecker(opt)
	doc := c.parse(raw)
	if doc != nil {
		c.result(doc, request)
		c.outOfRange()
	}
	return doc, c.finish(raw, doc != nil)
}

// resultKeys are the members of CreateMessageResult in every era: the
// SamplingMessage fields, model, stopReason and _meta (from Result before
// 2026-07-28, from SamplingMessage since).
var resultKeys = keys("role", "content", "model", "stopReason", "_meta")

// result runs every result rule (C1, C2, doc.go).
func (c *checker) result(doc, request Document) {
	c.unknownKeys("", doc, resultKeys)
	c.meta("", doc)
	c.resultRole(doc)
	c.nonEmpty(ruleResultModel, "", doc, "model")
	c.content("/content", doc, c.era.resultTypes)
	var uses []toolRef
	if c.era.tools { // earlier, tool_use is already a block-type violation
		uses = completionUses(doc, c.lim)
		c.resultTools(uses, request)
	}
	c.stopReason(doc, len(uses) > 0)
}

// resultRole checks that the completion speaks as the assistant.
func (c *checker) resultRole(doc Document) {
	if !c.required(ruleResultRole, "", doc, "role", kindString) {
		return
	}
	if r := doc["role"].(string); r != "assistant" {
		c.add(ruleResultRole, "/role", "role must be \"assistant\", got %s", quote(r))
	}
}

// completionUses returns the tool_use blocks of a completion.
func completionUses(doc Document, lim Limits) []toolRef {
	t := turn{role: "assistant"}
	t.collect(doc["content"], lim)
	return t.uses
}

// resultTools checks the completion's tool uses against the request: tools
// must have been offered and not switched off, "required" needs at least
// one use, each use names an offered tool, and ids are new.
func (c *checker) resultTools(uses []toolRef, request Document) {
	mode, offered := toolMode(request), toolNames(request)
	switch {
	case len(uses) > 0 && len(offered) == 0:
		c.add(ruleResultToolUse, uses[0].path, "the request offered no tools")
	case len(uses) > 0 && mode == "none":
		c.add(ruleResultToolUse, uses[0].path, "the request set toolChoice.mode to none")
	case len(uses) == 0 && mode == "required" && len(offered) > 0:
		c.add(ruleResultRequired, "/content", "the request set toolChoice.mode to required")
	}
	seen := requestUseIDs(request, c.lim)
	for _, u := range uses {
		if seen[u.id] {
			c.add(ruleDuplicateID, u.path+"/id", "tool use id %s is already used", quote(u.id))
		}
		seen[u.id] = true
		if len(offered) > 0 && u.name != "" && !offered[u.name] {
			c.add(ruleUnknownTool, u.path+"/name", "tool %s is not among the request's tools", quote(u.name))
		}
	}
}

// requestUseIDs returns the tool_use ids already present in the request's
// messages; a completion reusing one would make the next round ambiguous.
func requestUseIDs(request Document, lim Limits) map[string]bool {
	ids := map[string]bool{}
	for _, t := range turns(request, lim) {
		for _, u := range t.uses {
			ids[u.id] = true
		}
	}
	return ids
}

// stopReason checks that stopReason, an open string, says "toolUse"
// exactly when the completion holds tool_use: the upstream relies on it to
// know it must run tools and answer every use.
func (c *checker) stopReason(doc Document, usesTools bool) {
	const path = "/stopReason"
	v, present := doc["stopReason"]
	s, isStr := v.(string)
	switch {
	case present && !isStr:
		c.add(ruleStopReason, path, "stopReason must be a string, got %s", kindOf(v))
	case usesTools && s != "toolUse":
		c.add(ruleStopReason, path, "the completion uses tools, so stopReason must be \"toolUse\"")
	case !usesTools && s == "toolUse":
		c.add(ruleStopReason, path, "stopReason is \"toolUse\" but the completion uses no tool")
	}
}
