package validate

import (
	"cmp"
	"slices"
	"strconv"
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
	tr := newPathTrie(c.out)
	tr.record(raw, c.lim)
	slices.SortStableFunc(c.out, func(a, b Violation) int {
		return cmp.Compare(tr.position(a.Path), tr.position(b.Path))
	})
	return c.out
}

// pathTrie holds the JSON Pointers of the violations, split into their
// reference tokens, and where the recording parse found each value they
// name. Only values on a violation's path are looked up and recorded: a
// document of a million values under one long member name costs the
// recording parse one lookup per value, never a rendered pointer.
type pathTrie struct {
	child map[pathEdge]int32 // the node one token below a node
	spans []span             // per node; end 0 while the value is not found
}

// pathEdge is one step down the trie: from node parent by token.
type pathEdge struct {
	parent int32
	token  string
}

// offPath marks a value no violation's path leads to or through.
const offPath int32 = -1

func newPathTrie(vs []Violation) *pathTrie {
	tr := &pathTrie{child: map[pathEdge]int32{}, spans: []span{{}}}
	for _, v := range vs {
		node := int32(0)
		for tok := range tokens(v.Path) {
			next, ok := tr.child[pathEdge{node, tok}]
			if !ok {
				next = int32(len(tr.spans))
				tr.child[pathEdge{node, tok}] = next
				tr.spans = append(tr.spans, span{})
			}
			node = next
		}
	}
	return tr
}

// tokens yields the reference tokens of a JSON Pointer, still escaped,
// which is how child and index wrote them.
func tokens(path string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		if path == "" {
			return
		}
		for tok := range strings.SplitSeq(path[1:], "/") {
			if !yield(tok) {
				return
			}
		}
	}
}

// record parses raw once more, noting where each value on a violation's
// path sits. raw has already been parsed once, so errors cannot occur
// here; the throwaway checker swallows the violations that parse reports
// again.
func (tr *pathTrie) record(raw []byte, lim Limits) {
	p := parser{data: raw, c: &checker{lim: lim}, maxDepth: lim.MaxDepth, plain: &plainASCII, trie: tr}
	_, _ = p.value(0)
}

// below returns the node under node for a member name (key) or an array
// index, or offPath.
func (tr *pathTrie) below(node int32, key string, i int, member bool) int32 {
	if node == offPath {
		return offPath
	}
	tok := strconv.Itoa(i)
	if member {
		tok = segment(key)
	}
	if next, ok := tr.child[pathEdge{node, tok}]; ok {
		return next
	}
	return offPath
}

// position is the sort key of a violation path: the start of the value it
// names, or, for a member that is absent, the end of its nearest existing
// ancestor.
func (tr *pathTrie) position(path string) int64 {
	chain := []int32{0}
	for tok := range tokens(path) {
		chain = append(chain, tr.child[pathEdge{chain[len(chain)-1], tok}])
	}
	if s := tr.spans[chain[len(chain)-1]]; s.end > 0 {
		return s.start
	}
	for i := len(chain) - 2; i >= 0; i-- {
		if s := tr.spans[chain[i]]; s.end > 0 {
			return s.end
		}
	}
	return 0
}
