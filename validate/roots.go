package validate

// Roots checks the params of a roots/list request. They may be absent: raw
// empty or null stands for {}.
func Roots(raw []byte, opt Options) (Document, []Violation) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	c := newChecker(opt)
	doc := c.parse(raw)
	return doc, c.finish(raw, doc != nil)
}

// RootsResult checks the host's ListRootsResult.
func RootsResult(raw []byte, request Document, opt Options) (Document, []Violation) {
	c := newChecker(opt)
	doc := c.parse(raw)
	return doc, c.finish(raw, doc != nil)
}
