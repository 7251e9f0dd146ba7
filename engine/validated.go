package engine

import (
	"bytes"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// Validated is what structural validation made of a request's params: the
// document, with the kind, options and bytes it was made from. A verdict
// whose request validated carries it (Verdict.Validated); handed back with
// the request (Request.Validated) to Check or Reconsider, it spares
// validating the same bytes again, so a request is validated once per
// distinct bytes, not at every stage. Anything that differs (an operator's
// edit, other capabilities) is validated afresh: a Validated can only
// spare work, never vouch for bytes it was not made from.
type Validated struct {
	kind   Kind
	opts   validate.Options
	params []byte
	doc    validate.Document
}

// newValidated records doc as the clean validation of s's params. The
// bytes are copied: the caller's buffer may be reused.
func newValidated(s Request, opts validate.Options, doc validate.Document) *Validated {
	return &Validated{kind: s.kindOf(), opts: opts, params: bytes.Clone(s.Params), doc: doc}
}

// document is v's document when v was made from exactly these bytes under
// these rules and options; ok is false otherwise, and for a nil v.
func (v *Validated) document(s Request, opts validate.Options) (doc validate.Document, ok bool) {
	if v == nil || v.kind != s.kindOf() || v.opts != opts || !bytes.Equal(v.params, s.Params) {
		return nil, false
	}
	return v.doc, true
}
