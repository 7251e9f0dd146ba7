package validate

import "strings"

// Elicitation checks the raw JSON params of an elicitation/create request
// (a legacy push, or a 2026-07-28 input request's params): form mode's
// restricted requestedSchema, URL mode's absolute URL and elicitationId,
// the message, sizes and strict parsing, as Request does for sampling. It
// returns the parsed params and every violation in document order, and
// never panics.
//
// Elicitation is checked in every era: the capability the firewall offered
// the upstream, not the revision, decides whether it may ask (the Go SDK
// sends it in any era). URL mode exists from 2025-11-25 on.
func Elicitation(raw []byte, opt Options) (Document, []Violation) {
	c := newChecker(opt)
	c.unknownRule, c.metaRule = ruleEliUnknownKey, ruleEliMeta
	doc := c.parse(raw)
	if doc != nil {
		c.elicitation(doc)
		c.outOfRange()
	}
	return doc, c.finish(raw, doc != nil)
}

// The elicitation modes. modeNone stands for a mode the checks cannot
// use (of the wrong type, unknown, or not in the era), already reported.
const (
	modeForm = "form"
	modeURL  = "url"
	modeNone = ""
)

// elicitation runs every request rule on parsed params.
func (c *checker) elicitation(doc Document) {
	mode := c.elicitMode(doc)
	c.unknownKeys("", doc, c.elicitKeys(mode))
	c.elicitMessage(doc)
	c.modeOffered(mode)
	switch mode {
	case modeForm:
		c.form(doc)
	case modeURL:
		c.elicitURL(doc)
		c.elicitationID(doc)
	}
	if c.era.paramsMeta {
		c.meta("", doc)
	}
	if c.era.task {
		c.elicitTask(doc)
	}
}

// elicitKeys are the members the params may have in mode: those of
// ElicitRequestFormParams or ElicitRequestURLParams of the era (both,
// whatever the era, when the mode is unusable, so that only the mode is
// reported).
func (c *checker) elicitKeys(mode string) keySet {
	s := keys("mode", "message")
	if mode != modeURL {
		s = s.with("requestedSchema")
	}
	if mode == modeNone || (mode == modeURL && c.era.urlElicit) {
		s = s.with("url", "elicitationId")
	}
	if c.era.paramsMeta {
		s = s.with("_meta")
	}
	if c.era.task {
		s = s.with("task")
	}
	return s
}

// elicitMode returns the mode the request uses. Without a mode member, or
// with an empty one (which the Go SDK's client reads as absent), it is
// inferred as the SDK infers it: url when url or elicitationId is present,
// form otherwise.
func (c *checker) elicitMode(doc Document) string {
	v, present := doc["mode"]
	mode, isStr := v.(string)
	absent := !present || (isStr && mode == "")
	switch {
	case absent && (has(doc, "url") || has(doc, "elicitationId")):
		mode = modeURL
	case absent:
		mode = modeForm
	case !isStr:
		c.add(ruleEliMode, "/mode", "mode must be a string, got %s", kindOf(v))
		return modeNone
	case mode != modeForm && mode != modeURL:
		c.add(ruleEliMode, "/mode", "mode must be \"form\" or \"url\", got %s", quote(mode))
		return modeNone
	}
	if mode == modeURL && !c.era.urlElicit {
		c.add(ruleEliMode, "/mode", "URL mode needs protocol 2025-11-25 or later, the session is %s", c.era.name)
		return modeNone
	}
	return mode
}

// modeOffered checks that the firewall offered the upstream the mode it
// uses. A client that declares elicitation without a mode supports form
// only (the spec's backward compatibility, as the Go SDK reads it).
func (c *checker) modeOffered(mode string) {
	switch {
	case mode == modeForm && !c.caps.Form && c.caps.URL:
		c.add(ruleEliModeCap, "/mode", "form mode was not offered to this server")
	case mode == modeURL && !c.caps.URL:
		c.add(ruleEliModeCap, "/mode", "URL mode was not offered to this server")
	}
}

// elicitMessage checks the message shown to the user.
func (c *checker) elicitMessage(doc Document) {
	if !c.required(ruleEliMessage, "", doc, "message", kindString) {
		return
	}
	s := doc["message"].(string)
	if strings.TrimSpace(s) == "" {
		c.add(ruleEliMessage, "/message", "message is empty")
	}
	c.text("", "message", s)
}

// elicitationID checks URL mode's elicitationId: required in 2025-11-25,
// optional since 2026-07-28 dropped it (the Go SDK still sends it).
func (c *checker) elicitationID(doc Document) {
	var ok bool
	if c.era.elicitationID {
		ok = c.required(ruleEliID, "", doc, "elicitationId", kindString)
	} else {
		ok = c.optional(ruleEliID, "", doc, "elicitationId", kindString)
	}
	if !ok {
		return
	}
	id := doc["elicitationId"].(string)
	if id == "" {
		c.add(ruleEliID, "/elicitationId", "elicitationId is empty")
	}
	c.label("", "elicitationId", id)
}

// taskKeys are the members of TaskMetadata.
var taskKeys = keys("ttl")

// elicitTask checks the experimental task-augmentation member of
// 2025-11-25, as sampling's.
func (c *checker) elicitTask(doc Document) {
	if !c.optional(ruleEliTask, "", doc, "task", kindObject) {
		return
	}
	t := doc["task"].(map[string]any)
	c.unknownKeys("/task", t, taskKeys)
	c.optional(ruleEliTask, "/task", t, "ttl", kindNumber)
}

// ElicitationMode is the mode, "form" or "url", of an elicitation request
// already checked: its mode member, or the SDK's inference. An unusable
// request reads as form, whose answer is checked against whatever schema
// it has. The policy's facts read the mode here, so they and validation
// never disagree on it.
func ElicitationMode(request Document) string {
	switch m, _ := request["mode"].(string); {
	case m == modeURL:
		return modeURL
	case m == "" && (has(request, "url") || has(request, "elicitationId")):
		return modeURL
	}
	return modeForm
}

// ElicitationResult checks the host's ElicitResult against the request it
// answers (the Document Elicitation returned; nil reads as a form without
// fields): the action, content only with a form's accept, and that
// content fits the requested schema exactly. Messages name the field and
// the rule, never the value: the content is the user's data.
func ElicitationResult(raw []byte, request Document, opt Options) (Document, []Violation) {
	c := newChecker(opt)
	c.unknownRule, c.metaRule = ruleEliUnknownKey, ruleEliMeta
	doc := c.parse(raw)
	if doc != nil {
		c.elicitResult(doc, request)
		c.outOfRange()
	}
	return doc, c.finish(raw, doc != nil)
}

// elicitResultKeys are the members of ElicitResult in every era.
var elicitResultKeys = keys("action", "content", "_meta")

// actions are the values ElicitResult.action may take.
var actions = map[string]bool{"accept": true, "decline": true, "cancel": true}

// elicitResult runs every result rule.
func (c *checker) elicitResult(doc, request Document) {
	c.unknownKeys("", doc, elicitResultKeys)
	c.meta("", doc)
	action := ""
	if c.required(ruleEliAction, "", doc, "action", kindString) {
		action = doc["action"].(string)
		if !actions[action] {
			c.add(ruleEliAction, "/action", "action must be accept, decline or cancel, got %s", quote(action))
			action = ""
		}
	}
	accept := action == "accept"
	mode := ElicitationMode(request)
	v, present := doc["content"]
	content, isObj := v.(map[string]any)
	switch {
	case present && action != "" && !accept:
		c.add(ruleEliContent, "/content", "content comes only with accept")
	case present && mode == modeURL:
		c.add(ruleEliContent, "/content", "a URL-mode accept carries no content")
	case present && !isObj:
		c.add(ruleEliContent, "/content", "content must be an object, got %s", kindOf(v))
	case accept && mode == modeForm:
		c.answer(content, formFields(request), requiredFields(request))
	}
}
