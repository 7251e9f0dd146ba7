package validate

import (
	"net/url"
	"strings"
)

// Roots checks the params of a roots/list request. They may be absent: raw
// empty or null stands for {}. The params hold at most _meta.
func Roots(raw []byte, opt Options) (Document, []Violation) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	c := newRootsChecker(opt)
	doc := c.parse(raw)
	if doc != nil {
		c.unknownKeys("", doc, keys("_meta"))
		c.meta("", doc)
		c.outOfRange()
	}
	return doc, c.finish(raw, doc != nil)
}

// RootsResult checks the host's ListRootsResult: a list of roots, each an
// absolute file:// URI with an optional name, no URI twice. The request
// carries nothing a result depends on.
func RootsResult(raw []byte, request Document, opt Options) (Document, []Violation) {
	c := newRootsChecker(opt)
	doc := c.parse(raw)
	if doc != nil {
		c.rootsResult(doc)
		c.outOfRange()
	}
	return doc, c.finish(raw, doc != nil)
}

// newRootsChecker is a checker that reports unknown members and _meta
// under the roots rules.
func newRootsChecker(opt Options) *checker {
	c := newChecker(opt)
	c.unknownRule, c.metaRule = ruleRootsUnknown, ruleRootsMeta
	return c
}

// rootsResult runs every result rule.
func (c *checker) rootsResult(doc Document) {
	c.unknownKeys("", doc, keys("roots", "_meta"))
	c.meta("", doc)
	if !c.required(ruleRootsList, "", doc, "roots", kindArray) {
		return
	}
	list := doc["roots"].([]any)
	if len(list) > c.lim.MaxRoots {
		c.add(ruleLimitRoots, "/roots", "%d roots, limit %d", len(list), c.lim.MaxRoots)
		list = list[:c.lim.MaxRoots]
	}
	seen := make(map[string]bool, len(list))
	for i, v := range list {
		c.root(index("/roots", i), v, seen)
	}
}

// rootKeys are the members of Root.
var rootKeys = keys("uri", "name", "_meta")

// root checks one Root; seen holds the URIs listed before it.
func (c *checker) root(path string, v any, seen map[string]bool) {
	r, ok := v.(map[string]any)
	if !ok {
		c.add(ruleRoot, path, "a root must be an object, got %s", kindOf(v))
		return
	}
	c.unknownKeys(path, r, rootKeys)
	c.meta(path, r)
	if c.optional(ruleRootName, path, r, "name", kindString) {
		c.label(path, "name", r["name"].(string))
	}
	if !c.required(ruleRootURI, path, r, "uri", kindString) {
		return
	}
	uri := r["uri"].(string)
	if problem := rootURIProblem(uri); problem != "" {
		c.add(ruleRootURI, path+"/uri", "%s", problem)
	}
	if seen[uri] {
		c.add(ruleRootsDuplicate, path+"/uri", "this URI is listed twice")
	}
	seen[uri] = true
}

// rootURIProblem says what is wrong with a root's URI, or "". The spec
// says a root's URI must start with file://; it must also parse, name an
// absolute path, and hold no control or invisible format character, which
// would show a person one path and give the server another. A space is
// accepted: hosts send paths with spaces unescaped. A . or .. segment
// (escaped or not) is refused: a root must name its directory directly,
// so that a prefix compared with it (servers.<name>.roots.allow, policy)
// means what it says.
func rootURIProblem(s string) string {
	if len(s) < len("file://") || !strings.EqualFold(s[:len("file://")], "file://") {
		return "uri must start with file://"
	}
	for _, r := range s {
		if !shows(r) {
			return "uri holds a control character or an invisible format character"
		}
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "uri does not parse as a URI"
	case u.Opaque != "" || !strings.HasPrefix(u.Path, "/"):
		return "uri must name an absolute path"
	case dotSegment(u.Path):
		return "uri path has a . or .. segment: it must name its directory directly"
	}
	return ""
}

// dotSegment reports whether the (unescaped) path has a "." or ".."
// segment.
func dotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
