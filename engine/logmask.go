package engine

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// masker replaces what an upstream or a host wrote with keyed digests. It
// remembers each text's digest: the input carries every prompt text twice
// (in the request and in facts.texts), and hashing is most of what masking
// costs. A logEncoder keeps one and resets it for each event.
type masker struct {
	macs *sync.Pool // of keyed hmac hash.Hash
	seen map[string]string
}

// reset readies m for an event digested with the keyed hashes in macs,
// forgetting the texts of the last one.
func (m *masker) reset(macs *sync.Pool) {
	m.macs = macs
	if m.seen == nil {
		m.seen = map[string]string{}
	}
	clear(m.seen)
}

// digestValue digests a string, or any other JSON value as a whole.
func (m *masker) digestValue(v any) string {
	if s, ok := v.(string); ok {
		return m.digestText(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return m.digest(nil)
	}
	return m.digest(b)
}

func (m *masker) digestText(s string) string {
	if d, ok := m.seen[s]; ok {
		return d
	}
	d := m.digest([]byte(s))
	m.seen[s] = d
	return d
}

// digest is a keyed hash (HMAC-SHA256 with the salt), shortened to 96 bits:
// enough to correlate equal texts, useless for guessing them without the
// salt.
func (m *masker) digest(b []byte) string {
	h := m.macs.Get().(hash.Hash)
	defer m.macs.Put(h)
	h.Reset()
	h.Write(b)
	var sum [sha256.Size]byte
	return "hmac-sha256:" + hex.EncodeToString(h.Sum(sum[:0])[:12])
}

// errorText is err as the masked log may show it. The engine's own errors
// name kinds and steps, never values (see jsonKind); an evaluation error
// from OPA may quote whatever a builtin was given, which can be prompt
// text, so its message is digested and its code and policy location kept.
func (m *masker) errorText(err error) string {
	text := err.Error()
	if te, ok := errors.AsType[*topdown.Error](err); ok && te.Message != "" {
		text = strings.ReplaceAll(text, te.Message, m.digestText(te.Message))
	}
	return text
}

// masked appends v as shape s allows: kept when s says it is safe and v is
// what s expects, else digested. null, "", {} and [] stay as they are:
// they carry nothing, and an empty hidden_text or origin.name reads better
// than the digest of nothing.
func (e *logEncoder) masked(s *shape, v any) {
	if empty(v) {
		e.value(v)
		return
	}
	if !e.maskedAs(s, v) {
		e.string(e.mask.digestValue(v))
	}
}

func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// maskedAs appends v if s keeps it and reports whether it did.
func (e *logEncoder) maskedAs(s *shape, v any) bool {
	switch s.kind {
	case asIs:
		e.value(v)
		return true
	case number:
		return e.keptNumber(v)
	case boolean, oneOf, revision:
		return e.keptWord(s, v)
	case object, table, keyed, list, content:
		return e.maskedContainer(s, v)
	}
	return false
}

// keptWord appends v if it is a boolean, or a string s allows.
func (e *logEncoder) keptWord(s *shape, v any) bool {
	switch w := v.(type) {
	case bool:
		if s.kind == boolean {
			e.buf = strconv.AppendBool(e.buf, w)
			return true
		}
	case string:
		if s.words[w] || s.kind == revision && isRevision(w) {
			e.string(w)
			return true
		}
	}
	return false
}

// maskedContainer appends v if it is the object or array s describes,
// each of its values masked as s says.
func (e *logEncoder) maskedContainer(s *shape, v any) bool {
	switch c := v.(type) {
	case map[string]any:
		switch s.kind {
		case object, keyed:
			e.maskedObject(s, c)
		case table:
			e.maskedTable(s.elem, c)
		case content:
			e.maskedObject(s.elem, c)
		default:
			return false
		}
	case []any:
		if s.kind != list && s.kind != content {
			return false
		}
		e.maskedList(s.elem, c)
	default:
		return false
	}
	return true
}

// keptNumber appends v if it is a number short enough to be a count.
func (e *logEncoder) keptNumber(v any) bool {
	switch n := v.(type) {
	case json.Number:
		if len(n) > maxKeptNumber {
			return false
		}
	case int, int64, float64:
	default:
		return false
	}
	e.value(v)
	return true
}

func (e *logEncoder) maskedList(elem *shape, l []any) {
	writeList(e, l, func(item any) { e.masked(elem, item) })
}

// maskedTable appends an object whose member names the operator
// configured, its values shaped elem.
func (e *logEncoder) maskedTable(elem *shape, m map[string]any) {
	writeObject(e, m, func(v any) { e.masked(elem, v) })
}

// maskedObject appends an object with the members s names written as
// their shapes say and any other member's name and value digested, sorted
// by the names written, as json.Marshal sorts.
func (e *logEncoder) maskedObject(s *shape, m map[string]any) {
	start := len(e.keys)
	known := true
	for k := range m {
		e.keys = append(e.keys, k)
		known = known && s.fields[k] != nil
	}
	keys := e.keys[start:]
	if known {
		slices.Sort(keys)
		e.maskedMembers(s, m, keys)
	} else {
		e.maskedStrangers(s, m, keys)
	}
	e.keys = e.keys[:start]
}

// maskedMembers appends the members named keys, which s all defines, in
// that order.
func (e *logEncoder) maskedMembers(s *shape, m map[string]any, keys []string) {
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.string(k)
		e.buf = append(e.buf, ':')
		e.masked(s.fields[k], m[k])
	}
	e.buf = append(e.buf, '}')
}

// maskedStrangers appends an object some of whose members s does not
// define: their names are digested too, so the members are sorted by the
// names written. Only a request that failed validation, a free-form part
// the shapes keep, or a keyed object (whose values are shaped as its
// elem) has such members.
func (e *logEncoder) maskedStrangers(s *shape, m map[string]any, keys []string) {
	type member struct{ out, in string }
	list := make([]member, len(keys))
	for i, k := range keys {
		list[i] = member{k, k}
		if s.fields[k] == nil {
			list[i].out = e.mask.digestText(k)
		}
	}
	slices.SortFunc(list, func(a, b member) int { return strings.Compare(a.out, b.out) })
	e.buf = append(e.buf, '{')
	for i, mb := range list {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.string(mb.out)
		e.buf = append(e.buf, ':')
		e.masked(cmp.Or(s.fields[mb.in], s.stranger()), m[mb.in])
	}
	e.buf = append(e.buf, '}')
}

// maskedText appends a reason's or violation's message, digested when
// masking: a policy may quote the input in its messages, and validation
// quotes what it refused. Codes, rule ids and outcomes are mcpx-fw's or
// the policy author's words (codes already go on the wire), so they stay.
func (e *logEncoder) maskedText(s string) {
	if e.masking {
		s = e.mask.digestText(s)
	}
	e.string(s)
}

// maskedPath appends a violation's path, digested when masking unless it
// names a place (see placePath).
func (e *logEncoder) maskedPath(path string) {
	if e.masking && !placePath(path, e.fields) {
		path = e.mask.digestText(path)
	}
	e.string(path)
}

// placePath reports whether every step of path is an index, a member name
// the input document defines, or, after "properties" or "content", one of
// fields: the field names the request's form defines, as a path spells
// them (schemaFields). Such a path names a place, not a text: a form's
// field names are the server's schema, while what the user typed is a
// value, never a step, and a member of the answer the form did not define
// is digested with the path.
func placePath(path string, fields map[string]bool) bool {
	prev := ""
	for step := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		field := fields[step] && (prev == "properties" || prev == "content")
		if !field && !pathWords[step] && strings.Trim(step, "0123456789") != "" {
			return false
		}
		prev = step
	}
	return true
}

// schemaFields are the field names of an elicitation's requestedSchema
// in input's request, as a violation's path spells them
// (validate.PathStep); nil for any other request.
func schemaFields(input map[string]any) map[string]bool {
	req, _ := input["request"].(map[string]any)
	schema, _ := req["requestedSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	fields := make(map[string]bool, len(props))
	for name := range props {
		fields[validate.PathStep(name)] = true
	}
	return fields
}

// pathWords are the member names the input document's request and result
// define: a violation's path made of them names a place, not a text.
var pathWords = func() map[string]bool {
	words := map[string]bool{"": true}
	seen := map[*shape]bool{}
	var walk func(s *shape)
	walk = func(s *shape) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		for k, f := range s.fields {
			words[k] = true
			walk(f)
		}
		walk(s.elem)
	}
	for _, s := range inputShapes {
		walk(s.fields["request"])
		walk(s.fields["result"])
	}
	return words
}()
