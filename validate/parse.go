package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// parse reads raw as one JSON object, strictly. It reports oversize input,
// invalid UTF-8, duplicate keys, excessive nesting, syntax errors and
// trailing data. It returns nil when raw is not one JSON object it could
// read to the end; duplicate keys, invalid UTF-8 and trailing data are
// reported but still yield the document, so later checks can add theirs.
//
// It walks encoding/json's token stream rather than unmarshalling into a
// map, because only the token stream shows a key given twice, and a
// firewall must not let two readers of the same bytes see different values.
func (c *checker) parse(raw []byte) Document {
	if len(raw) > c.lim.MaxBytes {
		c.add(ruleLimitBytes, "", "%d bytes, limit %d", len(raw), c.lim.MaxBytes)
		return nil
	}
	if !utf8.Valid(raw) {
		c.add(ruleJSONUTF8, "", "input is not valid UTF-8")
	}
	p := newParser(raw, c, nil)
	v, err := p.value("", 0)
	if err != nil {
		c.syntax(err)
		return nil
	}
	doc, ok := v.(map[string]any)
	if !ok {
		c.add(ruleJSONSyntax, "", "expected a JSON object, got %s", kindOf(v))
		return nil
	}
	if _, err := p.dec.Token(); err != io.EOF {
		c.add(ruleJSONSyntax, "", "trailing data after the object")
	}
	return doc
}

// syntax reports a parse error, unless it is the depth limit, which the
// parser has already reported with its path.
func (c *checker) syntax(err error) {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, errDepth):
	case errors.As(err, &se):
		c.add(ruleJSONSyntax, "", "%s at byte %d", se.Error(), se.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		c.add(ruleJSONSyntax, "", "unexpected end of input")
	default:
		c.add(ruleJSONSyntax, "", "%s", err.Error())
	}
}

// errDepth stops parsing once the nesting limit is passed: the rest of the
// input is not worth reading and recursion must stay bounded.
var errDepth = errors.New("nesting limit exceeded")

// span is where a value sits in the input: start is at or before its first
// byte, end just after its last.
type span struct{ start, end int64 }

// parser builds map[string]any / []any / json.Number / string / bool / nil
// from a token stream. With spans set it also records where each value
// sits, which orders violations by position.
type parser struct {
	dec      *json.Decoder
	c        *checker
	maxDepth int
	spans    map[string]span
}

func newParser(raw []byte, c *checker, spans map[string]span) *parser {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return &parser{dec: dec, c: c, maxDepth: c.lim.MaxDepth, spans: spans}
}

// value reads one value at path; depth counts the containers around it.
func (p *parser) value(path string, depth int) (any, error) {
	start := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	v := any(tok)
	if d, ok := tok.(json.Delim); ok {
		v, err = p.container(d, path, depth+1)
		if err != nil {
			return nil, err
		}
	}
	if p.spans != nil {
		p.spans[path] = span{start, p.dec.InputOffset()}
	}
	return v, nil
}

// container reads the object or array that d opens, at the given depth.
func (p *parser) container(d json.Delim, path string, depth int) (any, error) {
	if depth > p.maxDepth {
		p.c.add(ruleLimitDepth, path, "nesting deeper than %d", p.maxDepth)
		return nil, errDepth
	}
	switch d {
	case '{':
		return p.object(path, depth)
	case '[':
		return p.array(path, depth)
	}
	return nil, fmt.Errorf("unexpected %q", rune(d))
}

// object reads members up to the closing brace. A repeated key is
// reported and the last value kept, as most JSON readers do.
func (p *parser) object(path string, depth int) (map[string]any, error) {
	obj := map[string]any{}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is %v", tok)
		}
		at := child(path, key)
		if _, dup := obj[key]; dup {
			p.c.add(ruleJSONDuplicate, at, "key %s appears more than once", quote(key))
		}
		if obj[key], err = p.value(at, depth); err != nil {
			return nil, err
		}
	}
	return obj, p.end()
}

// array reads elements up to the closing bracket.
func (p *parser) array(path string, depth int) ([]any, error) {
	arr := []any{}
	for p.dec.More() {
		v, err := p.value(index(path, len(arr)), depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	return arr, p.end()
}

// end consumes the closing delimiter; the decoder has already checked that
// it matches the opening one.
func (p *parser) end() error {
	_, err := p.dec.Token()
	return err
}
