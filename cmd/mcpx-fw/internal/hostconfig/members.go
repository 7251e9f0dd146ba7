package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// member is one member of a JSON object: its name and where its value's
// bytes start and end in the whole document read.
type member struct {
	Name       string
	Start, End int
	Value      json.RawMessage
}

// members reads the members of the object the document holds, in the
// file's order, each with the span of its value, so a rewrite can replace
// one value and leave every other byte as it was. data is strict JSON:
// a host's file passes through blank first.
func members(data []byte) ([]member, error) {
	return membersAt(data, 0, len(data))
}

// membersAt reads the members of the object data[start:end] holds, with
// spans of the whole of data; a syntax error names its line of data.
func membersAt(data []byte, start, end int) ([]member, error) {
	out, err := scan(data[start:end], start)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return nil, &SyntaxError{Line: lineAt(data, start+int(syn.Offset)), Msg: syn.Error()}
	}
	return out, err
}

func scan(data []byte, base int) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%v: %w", tok, err)
		}
		end := int(dec.InputOffset())
		out = append(out, member{Name: tok.(string), Start: base + end - len(raw), End: base + end, Value: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	switch _, err := dec.Token(); {
	case err == nil:
		return nil, errors.New("more than one JSON value")
	case !errors.Is(err, io.EOF): // text after the object that is not JSON
		return nil, err
	}
	return out, nil
}

// find returns the member named, if there is one.
func find(ms []member, name string) (member, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return member{}, false
}

// indentBefore is the run of spaces and tabs that starts the line holding
// offset: the indent a value written there should continue.
func indentBefore(data []byte, offset int) string {
	start := bytes.LastIndexByte(data[:offset], '\n') + 1
	end := start
	for end < offset && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}
