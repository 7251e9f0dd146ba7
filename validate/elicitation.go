package validate

// Elicitation checks the raw JSON params of an elicitation/create request
// (a legacy push, or a 2026-07-28 input request's params): form mode's
// restricted requestedSchema, URL mode's absolute URL and elicitationId,
// the message, sizes and strict parsing, as Request does for sampling.
func Elicitation(raw []byte, opt Options) (Document, []Violation) {
	c := newChecker(opt)
	doc := c.parse(raw)
	return doc, c.finish(raw, doc != nil)
}

// ElicitationResult checks the host's ElicitResult against the request it
// answers: an accept's content must fit the requested schema; decline and
// cancel carry no content.
func ElicitationResult(raw []byte, request Document, opt Options) (Document, []Violation) {
	c := newChecker(opt)
	doc := c.parse(raw)
	return doc, c.finish(raw, doc != nil)
}
