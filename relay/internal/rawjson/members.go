package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Member is one name and raw value of a JSON object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members lists the members of the JSON object in raw, in order, repeats
// included, without decoding the values: it reads any depth without
// recursion. Anything that is not an object, or a malformed one, yields
// what was read before the fault.
func Members(raw []byte) []Member {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	var out []Member
	for i++; ; {
		i = SkipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return out
		}
		end := valueEnd(raw, i)
		if end < 0 {
			return out
		}
		key, ok := decodeName(raw[i:end])
		if !ok {
			return out
		}
		if i = SkipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return out
		}
		i = SkipSpace(raw, i+1)
		if end = valueEnd(raw, i); end < 0 {
			return out
		}
		out = append(out, Member{Key: key, Value: raw[i:end]})
		if i = SkipSpace(raw, end); i >= len(raw) || raw[i] != ',' {
			return out
		}
		i++
	}
}

// decodeName is the string the quoted JSON string q holds, as
// json.Unmarshal decodes it, and whether it is one. A name with no escape,
// no control character and valid UTF-8 is its bytes between the quotes,
// taken without the decoder: most names are, and Members reads every name
// of every object the relay keeps in its sender's order.
func decodeName(q []byte) (string, bool) {
	if inner := q[1 : len(q)-1]; plainString(inner) {
		return string(inner), true
	}
	var name string
	return name, json.Unmarshal(q, &name) == nil
}

// plainString reports whether b, a JSON string's contents, decodes to
// itself: no escape, no control character, valid UTF-8.
func plainString(b []byte) bool {
	ascii := true
	for _, c := range b {
		if c == '\\' || c < 0x20 {
			return false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	return ascii || utf8.Valid(b)
}

func SkipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just after the JSON value starting at i, or
// -1 when raw ends first, counting brackets outside strings (so any depth
// costs nothing but the scan). It trusts the value to be JSON: a decoder
// still reads each value it returns.
func valueEnd(raw []byte, i int) int {
	depth := 0
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			if i >= len(raw) {
				return -1
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			depth--
		case ' ', '\t', '\n', '\r', ',', ':':
			if depth > 0 {
				continue
			}
			return i // after a number or literal at the top
		default:
			if depth > 0 {
				continue
			}
			for i+1 < len(raw) && !strings.ContainsRune(" \t\n\r,:]}", rune(raw[i+1])) {
				i++
			}
		}
		if depth == 0 {
			return i + 1
		}
	}
	return -1
}

// EachMember calls fn with the name (as written between its quotes) and
// the raw value of each member of the JSON object raw, in order, until fn
// returns false. It reports whether it read the whole object and fn
// accepted every member: false too for anything but an object, and for a
// name with an escape in it, which only a decoder can compare. raw must be
// valid JSON (json.Valid): the scan trusts it.
func EachMember(raw []byte, fn func(name, value []byte) bool) bool {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	if i = SkipSpace(raw, i+1); i < len(raw) && raw[i] == '}' {
		return true
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return false
		}
		end := valueEnd(raw, i)
		if end < 0 {
			return false
		}
		name := raw[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		if i = SkipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = SkipSpace(raw, i+1)
		if end = valueEnd(raw, i); end < 0 || !fn(name, raw[i:end]) {
			return false
		}
		switch i = SkipSpace(raw, end); {
		case i < len(raw) && raw[i] == ',':
			i = SkipSpace(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return true
		default:
			return false
		}
	}
}

// PlainString reports whether the JSON value v is a string without
// escapes: its bytes between the quotes are its text.
func PlainString(v []byte) bool {
	return len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v[1:len(v)-1], '\\') < 0
}

// Integer reports whether the JSON value v is an integer written without
// fraction or exponent, small enough for an int64.
func Integer(v []byte) bool {
	digits := bytes.TrimPrefix(v, []byte{'-'})
	if len(digits) == 0 || len(digits) > 18 {
		return false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// IsObject tells a valid JSON value is an object by its first byte.
func IsObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }

// EachElement calls fn with each raw element of the JSON array raw, in
// order, until fn returns false; it reports whether it read the whole
// array and fn accepted every element. raw must be valid JSON.
func EachElement(raw []byte, fn func(elem []byte) bool) bool {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	if i = SkipSpace(raw, i+1); i < len(raw) && raw[i] == ']' {
		return true
	}
	for {
		end := valueEnd(raw, i)
		if end < 0 || !fn(raw[i:end]) {
			return false
		}
		switch i = SkipSpace(raw, end); {
		case i < len(raw) && raw[i] == ',':
			i = SkipSpace(raw, i+1)
		case i < len(raw) && raw[i] == ']':
			return true
		default:
			return false
		}
	}
}

// ReadMembers reads each member of the JSON object raw into the slot slot
// names for it: a member without a slot, or one that repeats, refuses the
// object (the frame path reads only what it knows, and a repeated member
// means what the other side's decoder chooses).
func ReadMembers(raw []byte, slot func(name []byte) *[]byte) bool {
	return EachMember(raw, func(name, v []byte) bool {
		s := slot(name)
		if s == nil || *s != nil {
			return false
		}
		*s = v
		return true
	})
}
