package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Hidden is what a diff shows in place of a secret value: its length,
// never a character of it, so a dry run can go to a terminal, a CI log
// or a shared screen.
func Hidden(value string) string {
	n := utf8.RuneCountInString(value)
	if n == 1 {
		return "«hidden: 1 character»"
	}
	return "«hidden: " + strconv.Itoa(n) + " characters»"
}

// MaskedDiff is Diff of two versions of the host's file with every string
// value of an "env" or "headers" object, anywhere in the file, shown as
// Hidden: the keys and tokens a host's entries hold, of every scope. A
// version that cannot be read as the host's JSON is not shown at all.
func (h Host) MaskedDiff(name string, old, new []byte) string {
	return Diff(name, h.masked(name, old), h.masked(name, new))
}

func (h Host) masked(name string, data []byte) []byte {
	if len(data) == 0 {
		return data
	}
	out, err := h.mask(data)
	if err != nil {
		return []byte("«" + name + " is not read as " + h.Name + "'s JSON: its lines are not shown»\n")
	}
	return out
}

// mask replaces each env and headers value of data by Hidden, quoted.
// A value holds no line break (JSON strings cannot), so every line of
// data is a line of the result.
func (h Host) mask(data []byte) ([]byte, error) {
	clean, err := blank(data, h.JSONC)
	if err != nil {
		return nil, err
	}
	spans, err := secretSpans(clean)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(data)
	for i := len(spans) - 1; i >= 0; i-- { // from the end: earlier spans stay valid
		s := spans[i]
		v := string(clean[s[0]:s[1]]) // a number, true, false or null as written
		if clean[s[0]] == '"' {
			if err := json.Unmarshal(clean[s[0]:s[1]], &v); err != nil {
				return nil, err
			}
		}
		out = slices.Concat(out[:s[0]], []byte(strconv.Quote(Hidden(v))), out[s[1]:])
	}
	return out, nil
}

// frame is an object or array being read: for an object, whether a key
// comes next and the last key read; secret marks an env or headers
// object.
type frame struct {
	object, key, secret bool
	name                string
}

// secretSpans are the spans, quotes included, of the values of every
// object that is the value of an "env" or "headers" member, and of the
// values nested in one (a host refuses those, but a file being put back
// may hold anything).
func secretSpans(clean []byte) ([][2]int, error) {
	dec := json.NewDecoder(bytes.NewReader(clean))
	var stack []*frame
	var spans [][2]int
	for {
		prev := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return spans, nil
		}
		if err != nil {
			return nil, err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		name, isString := tok.(string)
		switch d, isDelim := tok.(json.Delim); {
		case isDelim:
			stack = openClose(stack, top, d)
		case isString && top != nil && top.object && top.key:
			top.name, top.key = name, false
		default:
			if top != nil && top.secret {
				start := prev + bytes.IndexFunc(clean[prev:], func(r rune) bool { return !strings.ContainsRune(" \t\r\n:,", r) })
				spans = append(spans, [2]int{start, int(dec.InputOffset())})
			}
			valueRead(top)
		}
	}
}

// openClose pushes the frame of an object or array opened, or pops the
// one closed.
func openClose(stack []*frame, top *frame, d json.Delim) []*frame {
	switch d {
	case '{', '[':
		f := &frame{object: d == '{', key: d == '{'}
		f.secret = top != nil && (top.secret || f.object && top.object && !top.key && (top.name == "env" || top.name == "headers"))
		return append(stack, f)
	}
	stack = stack[:len(stack)-1]
	if len(stack) > 0 {
		valueRead(stack[len(stack)-1])
	}
	return stack
}

// valueRead marks a value of the object read: a key comes next.
func valueRead(f *frame) {
	if f != nil && f.object {
		f.key = true
	}
}
