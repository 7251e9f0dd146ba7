package validate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxViolations caps how many violations one check collects. A hostile
// document can break a rule once per value; past this many the first ones
// already decide, and collecting more would only cost memory.
const maxViolations = 1000

// checker carries what every check needs and collects the violations.
type checker struct {
	era  *eraFeatures
	caps Capabilities
	lim  Limits
	out  []Violation
	huge []hugeNumber // numbers no float64 holds, for outOfRange

	// unknownRule and metaRule are the ids an unknown member and a
	// malformed _meta are reported under: sampling's by default, each
	// other kind's own (elicitation, roots) when it checks.
	unknownRule ruleID
	metaRule    ruleID
}

// hugeNumber is a number the parser found too large for a float64, and
// where.
type hugeNumber struct {
	path    string
	literal json.Number
}

// newChecker resolves the options once. An unknown era is itself a
// violation: the firewall must not guess which rules an upstream follows.
func newChecker(opt Options) *checker {
	era, known := featuresOf(opt.Era)
	c := &checker{era: era, caps: opt.Caps, lim: opt.Limits.resolved(),
		unknownRule: ruleUnknownKey, metaRule: ruleMeta}
	if !known {
		c.add(ruleEraUnknown, "", "protocol version %s is not supported", quote(opt.Era))
	}
	return c
}

// add records one violation. It is the only way a violation is made, so
// every id goes through the rule table: an id missing from the table is
// kept but marked, and the tests fail on it.
func (c *checker) add(id ruleID, path, format string, args ...any) {
	if c.full() {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if !listed(id) {
		msg = "unlisted rule: " + msg
	}
	c.out = append(c.out, Violation{Rule: string(id), Path: path, Message: msg})
}

// hugeNumber notes a number too large for a float64 at path; outOfRange
// decides whether it is reported.
func (c *checker) hugeNumber(path string, n json.Number) {
	if len(c.huge) < maxViolations {
		c.huge = append(c.huge, hugeNumber{path, n})
	}
}

// outOfRange reports every number too large for a float64 that no other
// violation covers, as json.syntax (RFC 8259 §6 lets a reader limit the
// range of numbers). Where the schema wants a number (maxTokens,
// temperature, priorities, ttl, size) the member's own rule has reported
// it, and a number inside a member already refused goes with that member.
// The rest sit in values passed on as they are (metadata, tool input,
// schemas, structuredContent, _meta), which every MCP SDK decodes into
// float64: it would refuse the whole message with an error of its own, so
// the firewall refuses it first, with its own.
func (c *checker) outOfRange() {
	for _, n := range c.huge {
		if !c.covered(n.path) {
			c.add(ruleJSONSyntax, n.path, "number %s does not fit a 64-bit float", quote(string(n.literal)))
		}
	}
}

// covered reports whether a violation names path or a value holding it.
func (c *checker) covered(path string) bool {
	for _, v := range c.out {
		if v.Path == path || strings.HasPrefix(path, v.Path+"/") {
			return true
		}
	}
	return false
}

// full reports whether the violation cap is reached, so that a caller can
// skip the work of describing one more.
func (c *checker) full() bool {
	return len(c.out) >= maxViolations
}

// keySet is the set of member names an object may have.
type keySet map[string]bool

// keys builds a keySet from member names.
func keys(names ...string) keySet {
	s := make(keySet, len(names))
	for _, n := range names {
		s[n] = true
	}
	return s
}

// with returns a copy of s plus names, for members that only some eras
// allow.
func (s keySet) with(names ...string) keySet {
	out := make(keySet, len(s)+len(names))
	for n := range s {
		out[n] = true
	}
	for _, n := range names {
		out[n] = true
	}
	return out
}

// unknownKeys reports every member of obj that allowed does not name, in
// sorted order so the output does not depend on map iteration. Names are
// compared exactly: "Role" or "role\u0000" is not "role".
func (c *checker) unknownKeys(path string, obj map[string]any, allowed keySet) {
	for _, k := range extraKeys(obj, allowed) {
		c.add(c.unknownRule, child(path, k), "unknown field %s", quote(k))
	}
}

// extraKeys are the members of obj that allowed does not name, sorted so
// that what is reported does not depend on map iteration.
func extraKeys(obj map[string]any, allowed keySet) []string {
	var extra []string
	for k := range obj {
		if !allowed[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	return extra
}

// meta checks an optional _meta member, which is always an object when
// present.
func (c *checker) meta(path string, obj map[string]any) {
	if v, ok := obj["_meta"]; ok {
		if _, isObj := v.(map[string]any); !isObj {
			c.add(c.metaRule, child(path, "_meta"), "_meta must be an object, got %s", kindOf(v))
		}
	}
}

// text checks the size of s, member key of the object at path: one text
// field the model will read.
func (c *checker) text(path, key, s string) {
	if len(s) > c.lim.MaxTextBytes {
		c.add(ruleLimitText, child(path, key), "text is %d bytes, limit %d", len(s), c.lim.MaxTextBytes)
	}
}

// label checks the size of s, member key of the object at path: one short
// text a person reads in a form or a list (a field's name, title or
// description, an option, an id, a root's name).
func (c *checker) label(path, key, s string) {
	if len(s) > c.lim.MaxLabelBytes {
		c.add(ruleLimitLabel, child(path, key), "%d bytes, limit %d", len(s), c.lim.MaxLabelBytes)
	}
}

// finite parses a JSON number as a float64 and reports whether it fits.
// Numbers that overflow or underflow a float64 are refused because the
// host would decode them differently from what policy saw.
func finite(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

// unit reports whether v is a number in 0..1, the range of priorities.
func unit(v any) bool {
	f, ok := finite(v)
	return ok && f >= 0 && f <= 1
}

// kindOf names the JSON type of a parsed value, for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// quote renders an upstream-supplied string for a message: quoted, and cut
// short so a violation never carries much of what the upstream sent.
func quote(s string) string {
	const most = 40
	if len(s) > most {
		cut := most
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// pointerEscaper escapes one JSON Pointer reference token (RFC 6901 §3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// maxSegment is the most bytes of a member name a path spells out. Paths
// are for people and for ordering; a member name of megabytes, repeated in
// the path of every violation under it, would only cost memory.
const maxSegment = 64

// segment is the reference token of member key in a path: escaped, and
// cut at maxSegment bytes (on a character boundary) with "…" appended, so
// a path never holds much of what the upstream sent.
func segment(key string) string {
	if len(key) > maxSegment {
		cut := maxSegment
		for cut > 0 && !utf8.RuneStart(key[cut]) {
			cut--
		}
		key = key[:cut] + "…"
	}
	return pointerEscaper.Replace(key)
}

// PathStep is the reference token a violation's path spells member name
// with: escaped, and cut short past maxSegment bytes. A reader of paths
// (the decision log) compares a step with a name it knows through it.
func PathStep(name string) string { return segment(name) }

// child returns the JSON Pointer of member key under path; a long key is
// cut short (see segment).
func child(path, key string) string {
	return path + "/" + segment(key)
}

// index returns the JSON Pointer of element i under path.
func index(path string, i int) string {
	return path + "/" + strconv.Itoa(i)
}

// jsonKind is the JSON type a member must have.
type jsonKind int

const (
	kindString jsonKind = iota
	kindObject
	kindArray
	kindBool
	kindNumber
)

var kindNames = [...]string{"a string", "an object", "an array", "a boolean", "a number"}

// is reports whether v has kind k. A number must also fit a float64.
func (k jsonKind) is(v any) bool {
	switch k {
	case kindString:
		_, ok := v.(string)
		return ok
	case kindObject:
		_, ok := v.(map[string]any)
		return ok
	case kindArray:
		_, ok := v.([]any)
		return ok
	case kindBool:
		_, ok := v.(bool)
		return ok
	}
	_, ok := finite(v)
	return ok
}

// optional checks member key of obj when present: it must have kind k.
// It reports whether the member is present and well typed.
func (c *checker) optional(id ruleID, path string, obj map[string]any, key string, k jsonKind) bool {
	v, ok := obj[key]
	if !ok {
		return false
	}
	if !k.is(v) {
		got := kindOf(v)
		if _, num := v.(json.Number); num && k == kindNumber {
			got = "a number out of range"
		}
		c.add(id, child(path, key), "%s must be %s, got %s", key, kindNames[k], got)
		return false
	}
	return true
}

// required checks member key of obj: present, with kind k. It reports
// whether it is.
func (c *checker) required(id ruleID, path string, obj map[string]any, key string, k jsonKind) bool {
	if !has(obj, key) {
		c.add(id, child(path, key), "%s is missing", key)
		return false
	}
	return c.optional(id, path, obj, key, k)
}
