package validate

import (
	"cmp"
	"slices"
	"strings"
)

// finish returns the violations in document order. Checks run in whatever
// order reads best; sorting afterwards keeps the first violation, the one
// whose Title goes on the wire, independent of how the code is arranged.
//
// Positions come from a second, recording parse, done only when there is
// something to order. A path that names a missing member sorts at the end
// of the nearest enclosing value that exists. Ties keep emission order.
func (c *checker) finish(raw []byte, parsed bool) []Violation {
	if !parsed || len(c.out) < 2 {
		return c.out
	}
	spans := spansOf(raw, c.lim)
	slices.SortStableFunc(c.out, func(a, b Violation) int {
		return cmp.Compare(position(spans, a.Path), position(spans, b.Path))
	})
	return c.out
}

// spansOf records where every value of raw sits. raw has already been
// parsed once, so errors cannot occur here; the throwaway checker swallows
// the violations that parse reports again.
func spansOf(raw []byte, lim Limits) map[string]span {
	spans := map[string]span{}
	p := parser{data: raw, c: &checker{lim: lim}, maxDepth: lim.MaxDepth, plain: &plainASCII, spans: spans}
	_, _ = p.value(0)
	return spans
}

// position is the sort key of a violation path: the start of the value it
// names, or, for a member that is absent, the end of its nearest existing
// ancestor.
func position(spans map[string]span, path string) int64 {
	if s, ok := spans[path]; ok {
		return s.start
	}
	for p := path; p != ""; {
		p = p[:strings.LastIndex(p, "/")]
		if s, ok := spans[p]; ok {
			return s.end
		}
	}
	return 0
}
