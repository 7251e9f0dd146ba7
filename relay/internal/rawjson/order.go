package rawjson

import (
	"bytes"
	"encoding/json"
)

// InOrderOf is v, a compact JSON value, with the members of each of its
// objects in the order the same object has them in ref, the value as its
// sender wrote it: members ref does not have follow in v's order. Only the
// order is taken from ref; every name and value is v's, so ref may be
// anything (a value that is not JSON, or another value, changes no byte
// but the order). Arrays are followed element by element. A decoder that
// fills a map (the SDK's types hold free-form JSON so) sorts its members;
// this gives them back the sender's order.
func InOrderOf(v, ref []byte) []byte {
	switch {
	case len(v) == 0 || len(ref) == 0:
		return v
	case v[0] == '{':
		return objectInOrder(v, ref)
	case v[0] == '[':
		return arrayInOrder(v, ref)
	}
	return v
}

func objectInOrder(v, ref []byte) []byte {
	members, refs := Members(v), Members(ref)
	if len(members) == 0 {
		return v
	}
	out := make([]byte, 0, len(v))
	out = append(out, '{')
	done := make([]bool, len(members))
	// By name, not by a scan per reference member: an upstream's form may
	// hold tens of thousands of members, and a scan would be quadratic.
	index := make(map[string]int, len(members))
	for i := len(members) - 1; i >= 0; i-- {
		index[members[i].Key] = i
	}
	for _, r := range refs {
		if i, ok := index[r.Key]; ok && !done[i] {
			done[i], out = true, appendMember(out, members[i], r.Value)
		}
	}
	for i, m := range members {
		if !done[i] {
			out = appendMember(out, m, nil)
		}
	}
	return append(out, '}')
}

func appendMember(out []byte, m Member, ref []byte) []byte {
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = appendName(out, m.Key)
	out = append(out, ':')
	return append(out, InOrderOf(m.Value, bytes.TrimSpace(ref))...)
}

// appendName appends name as json.Marshal encodes it: quoted as it is
// when it is printable ASCII that needs no escape (most names are),
// through the encoder otherwise.
func appendName(out []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(name)
			return append(out, quoted...)
		}
	}
	out = append(out, '"')
	out = append(out, name...)
	return append(out, '"')
}

func arrayInOrder(v, ref []byte) []byte {
	var refs [][]byte
	EachElement(ref, func(e []byte) bool { refs = append(refs, e); return true })
	out := make([]byte, 0, len(v))
	out = append(out, '[')
	i := 0
	EachElement(v, func(e []byte) bool {
		if i > 0 {
			out = append(out, ',')
		}
		if i < len(refs) {
			e = InOrderOf(e, refs[i])
		}
		out, i = append(out, e...), i+1
		return true
	})
	return append(out, ']')
}

// MemberValue is the value of the member name of the JSON object raw, nil
// when it has none (the last, where it repeats, as a decoder reads it).
func MemberValue(raw []byte, name string) []byte {
	var v []byte
	for _, m := range Members(raw) {
		if m.Key == name {
			v = m.Value
		}
	}
	return v
}
