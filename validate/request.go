package validate

import (
	"encoding/json"
	"regexp"
	"strconv"
)

// Request checks the raw JSON params of a sampling/createMessage request
// sent by an upstream server in the session's era, with the capabilities
// the firewall advertised to that upstream. It returns the parsed params
// (numbers as json.Number, so policy sees exact values) and every
// violation in document order. Document is nil when raw is not one JSON
// object; there is then at least one violation. Request never panics.
func Request(raw []byte, opt Options) (Document, []Violation) {
	c := newChecker(opt)
	doc := c.parse(raw)
	if doc != nil {
		c.request(doc)
		c.outOfRange()
	}
	return doc, c.finish(raw, doc != nil)
}

// paramsKeysOf returns the members CreateMessageRequestParams has in era e
// (schema CreateMessageRequestParams).
func paramsKeysOf(e *eraFeatures) keySet {
	s := keys("messages", "modelPreferences", "systemPrompt", "includeContext",
		"temperature", "maxTokens", "stopSequences", "metadata")
	if e.paramsMeta {
		s = s.with("_meta")
	}
	if e.tools {
		s = s.with("tools", "toolChoice")
	}
	if e.task {
		s = s.with("task")
	}
	return s
}

// request runs every request rule on parsed params. A member the era does
// not know is reported once, as unknown, and not checked further.
func (c *checker) request(doc Document) {
	allowed := c.era.paramsKeys
	c.unknownKeys("", doc, allowed)
	c.messages(doc)
	c.maxTokens(doc)
	c.scalars(doc)
	c.modelPreferences(doc)
	c.includeContext(doc)
	if allowed["tools"] {
		c.toolsAndChoice(doc)
	}
	if allowed["task"] {
		c.task(doc)
	}
	if allowed["_meta"] {
		c.meta("", doc)
	}
	if c.era.tools {
		c.pairing(doc)
	}
}

// messages checks the messages array and every message in it, up to the
// message limit.
func (c *checker) messages(doc Document) {
	v, present := doc["messages"]
	msgs, ok := v.([]any)
	switch {
	case !present:
		c.add(ruleMessages, "/messages", "messages is missing")
		return
	case !ok:
		c.add(ruleMessages, "/messages", "messages must be an array, got %s", kindOf(v))
		return
	case len(msgs) == 0:
		c.add(ruleMessages, "/messages", "messages is empty")
		return
	case len(msgs) > c.lim.MaxMessages:
		c.add(ruleLimitMessages, "/messages", "%d messages, limit %d", len(msgs), c.lim.MaxMessages)
		msgs = msgs[:c.lim.MaxMessages]
	}
	for i, m := range msgs {
		c.message(i, m)
	}
}

// messagePaths and contentPaths are the JSON Pointers of the first
// messages and of their content, which every request names: built once
// rather than for each request.
var messagePaths, contentPaths = func() (m, c [64]string) {
	for i := range m {
		m[i] = index("/messages", i)
		c[i] = m[i] + "/content"
	}
	return m, c
}()

// message checks messages[i], one SamplingMessage: an object with a role
// and content, and _meta from 2025-11-25 on.
func (c *checker) message(i int, v any) {
	var path, content string
	if i < len(messagePaths) {
		path, content = messagePaths[i], contentPaths[i]
	} else {
		path = index("/messages", i)
		content = path + "/content"
	}
	msg, ok := v.(map[string]any)
	if !ok {
		c.add(ruleMessage, path, "message must be an object, got %s", kindOf(v))
		return
	}
	if c.era.tools {
		c.meta(path, msg)
	}
	c.unknownKeys(path, msg, c.era.messageKeys)
	c.role(path, msg)
	c.content(content, msg, c.era.requestTypes)
}

// role checks that a message's role is one of the two the spec defines.
func (c *checker) role(path string, msg map[string]any) {
	role, ok := msg["role"].(string)
	switch {
	case !has(msg, "role"):
		c.add(ruleRole, child(path, "role"), "role is missing")
	case !ok:
		c.add(ruleRole, child(path, "role"), "role must be a string, got %s", kindOf(msg["role"]))
	case role != "user" && role != "assistant":
		c.add(ruleRole, child(path, "role"), "role must be \"user\" or \"assistant\", got %s", quote(role))
	}
}

// positiveInt is the only spelling of maxTokens accepted: a plain decimal
// integer without sign, fraction or exponent. "1e2" and "100.0" are
// numbers a JavaScript reader accepts but an int64 field does not, and the
// host must read the same value policy judged.
var positiveInt = regexp.MustCompile(`^[1-9][0-9]*$`)

// maxTokens checks that maxTokens is present and a positive integer that
// fits an int64. Caps on its size are policy.
func (c *checker) maxTokens(doc Document) {
	const path = "/maxTokens"
	v, present := doc["maxTokens"]
	n, isNum := v.(json.Number)
	switch {
	case !present:
		c.add(ruleMaxTokens, path, "maxTokens is missing")
	case !isNum:
		c.add(ruleMaxTokens, path, "maxTokens must be a number, got %s", kindOf(v))
	case !positiveInt.MatchString(string(n)):
		c.add(ruleMaxTokens, path, "maxTokens must be a positive integer, got %s", quote(string(n)))
	default:
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			c.add(ruleMaxTokens, path, "maxTokens %s does not fit a 64-bit integer", quote(string(n)))
		}
	}
}

// has reports whether obj has member k, whatever its value.
func has(obj map[string]any, k string) bool {
	_, ok := obj[k]
	return ok
}
