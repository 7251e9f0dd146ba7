package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// parse reads raw as one JSON object, strictly. It reports oversize input,
// invalid UTF-8, duplicate keys, excessive nesting, syntax errors and
// trailing data. It returns nil when raw is not one JSON object it could
// read to the end; duplicate keys, invalid UTF-8 and trailing data are
// reported but still yield the document, so later checks can add theirs.
//
// It is its own reader rather than json.Unmarshal into a map, because only
// a reader that sees every member shows a key given twice, and a firewall
// must not let two readers of the same bytes see different values. It
// accepts exactly the JSON that encoding/json accepts and builds the same
// values (strings unescaped the same way, invalid UTF-8 and lone
// surrogates as U+FFFD, numbers as json.Number); FuzzRequest checks that
// against encoding/json.
func (c *checker) parse(raw []byte) Document {
	if len(raw) > c.lim.MaxBytes {
		c.add(ruleLimitBytes, "", "%d bytes, limit %d", len(raw), c.lim.MaxBytes)
		return nil
	}
	var path [16]pathSeg
	p := parser{data: raw, c: c, maxDepth: c.lim.MaxDepth, plain: &plainUTF8, path: path[:0]}
	if !utf8.Valid(raw) {
		c.add(ruleJSONUTF8, "", "input is not valid UTF-8")
		p.plain = &plainASCII
	}
	v, err := p.value(0)
	if err != nil {
		c.syntax(err)
		return nil
	}
	doc, ok := v.(map[string]any)
	if !ok {
		c.add(ruleJSONSyntax, "", "expected a JSON object, got %s", kindOf(v))
		return nil
	}
	if p.skipSpace(); p.pos < len(p.data) {
		c.add(ruleJSONSyntax, "", "trailing data after the object")
	}
	return doc
}

// syntax reports a parse error, unless it is the depth limit, which the
// parser has already reported with its path.
func (c *checker) syntax(err error) {
	var se *syntaxError
	switch {
	case errors.Is(err, errDepth):
	case errors.Is(err, errEOF):
		c.add(ruleJSONSyntax, "", "unexpected end of input")
	case errors.As(err, &se):
		c.add(ruleJSONSyntax, "", "%s at byte %d", se.msg, se.offset)
	default:
		c.add(ruleJSONSyntax, "", "%s", err.Error())
	}
}

var (
	// errDepth stops parsing once the nesting limit is passed: the rest
	// of the input is not worth reading and recursion must stay bounded.
	errDepth = errors.New("nesting limit exceeded")
	// errEOF is input that ends inside a value.
	errEOF = errors.New("unexpected end of input")
)

// syntaxError is input that is not JSON, at a byte offset.
type syntaxError struct {
	msg    string
	offset int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.offset) }

// span is where a value sits in the input: start at its first byte, end
// just after its last.
type span struct{ start, end int64 }

// pathSeg is one step of the JSON Pointer of the value being read: a
// member name, or an array index. The parser keeps the steps on a stack
// and renders them only when a violation or a span needs the pointer, so
// that reading a clean document builds no path strings.
type pathSeg struct {
	key    string // member name, when member
	index  int    // array index, when !member
	member bool
}

// pointer renders the path of the value being read; the root is "".
// Member names are cut short as child cuts them, so a pointer costs at
// most the depth limit times a short token, whatever the keys' length.
func (p *parser) pointer() string {
	var b strings.Builder
	for _, seg := range p.path {
		b.WriteByte('/')
		if seg.member {
			b.WriteString(segment(seg.key))
		} else {
			b.WriteString(strconv.Itoa(seg.index))
		}
	}
	return b.String()
}

// parser builds map[string]any / []any / json.Number / string / bool / nil
// from raw bytes. With trie set it also records where the values on the
// violations' paths sit, which orders violations by position.
type parser struct {
	data     []byte
	pos      int
	c        *checker
	maxDepth int
	plain    *[256]bool // plainUTF8 or plainASCII
	path     []pathSeg  // where the value being read is
	trie     *pathTrie  // when recording: the paths to record
	node     int32      // when recording: the trie node of the value being read
}

// value reads one value at p.path; depth counts the containers around it.
func (p *parser) value(depth int) (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, errEOF
	}
	start := p.pos
	var v any
	var err error
	switch b := p.data[p.pos]; {
	case b == '{':
		v, err = p.object(depth + 1)
	case b == '[':
		v, err = p.array(depth + 1)
	case b == '"':
		v, err = p.stringValue()
	case b == '-' || ('0' <= b && b <= '9'):
		v, err = p.number()
	case b == 't':
		v, err = true, p.literal("true")
	case b == 'f':
		v, err = false, p.literal("false")
	case b == 'n':
		v, err = nil, p.literal("null")
	default:
		return nil, p.errorf(p.pos, "invalid character %s looking for beginning of value", quoteByte(b))
	}
	if err != nil {
		return nil, err
	}
	if p.trie != nil && p.node != offPath {
		p.trie.spans[p.node] = span{int64(start), int64(p.pos)}
	}
	return v, nil
}

// object reads members up to the closing brace; p.pos is at '{'. A
// repeated key is reported and the last value kept, as encoding/json does.
func (p *parser) object(depth int) (map[string]any, error) {
	if depth > p.maxDepth {
		p.c.add(ruleLimitDepth, p.pointer(), "nesting deeper than %d", p.maxDepth)
		return nil, errDepth
	}
	p.pos++
	obj := map[string]any{}
	if p.skipSpace(); p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return obj, nil
	}
	for {
		if p.skipSpace(); p.pos >= len(p.data) {
			return nil, errEOF
		}
		if b := p.data[p.pos]; b != '"' {
			return nil, p.errorf(p.pos, "invalid character %s looking for beginning of object key string", quoteByte(b))
		}
		key, err := p.str(true)
		if err != nil {
			return nil, err
		}
		if err := p.expect(':', "after object key"); err != nil {
			return nil, err
		}
		p.path = append(p.path, pathSeg{key: key, member: true})
		if _, dup := obj[key]; dup && !p.c.full() {
			p.c.add(ruleJSONDuplicate, p.pointer(), "key %s appears more than once", quote(key))
		}
		v, err := p.child(depth, key, 0, true)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		obj[key] = v
		if p.skipSpace(); p.pos >= len(p.data) {
			return nil, errEOF
		}
		switch b := p.data[p.pos]; b {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return obj, nil
		default:
			return nil, p.errorf(p.pos, "invalid character %s after object key:value pair", quoteByte(b))
		}
	}
}

// child reads the value of a member (key) or an array element (i), keeping
// track of the trie node when recording.
func (p *parser) child(depth int, key string, i int, member bool) (any, error) {
	if p.trie == nil {
		return p.value(depth)
	}
	parent := p.node
	if p.node = p.trie.below(parent, key, i, member); p.node == offPath {
		p.node = parent
		p.skip()
		return nil, nil
	}
	v, err := p.value(depth)
	p.node = parent
	return v, err
}

// skip moves past one value of input already read once without error,
// building nothing: recording needs no value off the violations' paths.
func (p *parser) skip() {
	d := p.data
	p.skipSpace()
	depth := 0
	for i := p.pos; i < len(d); i++ {
		switch d[i] {
		case '"':
			for i++; i < len(d) && d[i] != '"'; i++ {
				if d[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			depth--
		case ',', ':', ' ', '\t', '\r', '\n':
			continue
		default: // a number or a literal
			for i+1 < len(d) && !isDelimiter(d[i+1]) {
				i++
			}
		}
		if depth == 0 {
			p.pos = i + 1
			return
		}
	}
	p.pos = len(d)
}

// isDelimiter reports the bytes that end a number or a literal.
func isDelimiter(b byte) bool {
	switch b {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// array reads elements up to the closing bracket; p.pos is at '['.
func (p *parser) array(depth int) ([]any, error) {
	if depth > p.maxDepth {
		p.c.add(ruleLimitDepth, p.pointer(), "nesting deeper than %d", p.maxDepth)
		return nil, errDepth
	}
	p.pos++
	arr := []any{}
	if p.skipSpace(); p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for {
		p.path = append(p.path, pathSeg{index: len(arr)})
		v, err := p.child(depth, "", len(arr), false)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		arr = append(arr, v)
		if p.skipSpace(); p.pos >= len(p.data) {
			return nil, errEOF
		}
		switch b := p.data[p.pos]; b {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return arr, nil
		default:
			return nil, p.errorf(p.pos, "invalid character %s after array element", quoteByte(b))
		}
	}
}

// skipSpace moves past JSON whitespace.
func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// expect moves past optional whitespace and the byte want.
func (p *parser) expect(want byte, context string) error {
	if p.skipSpace(); p.pos >= len(p.data) {
		return errEOF
	}
	if b := p.data[p.pos]; b != want {
		return p.errorf(p.pos, "invalid character %s %s", quoteByte(b), context)
	}
	p.pos++
	return nil
}

// literal reads true, false or null.
func (p *parser) literal(word string) error {
	for i := range len(word) {
		switch {
		case p.pos+i >= len(p.data):
			return errEOF
		case p.data[p.pos+i] != word[i]:
			return p.errorf(p.pos+i, "invalid character %s in literal %s (expecting %s)",
				quoteByte(p.data[p.pos+i]), word, quoteByte(word[i]))
		}
	}
	p.pos += len(word)
	return nil
}

// number reads a number in the JSON grammar and keeps its spelling. A
// number no float64 can hold is noted for outOfRange.
func (p *parser) number() (any, error) {
	d, start := p.data, p.pos
	i := start
	if d[i] == '-' {
		i++
	}
	intStart := i
	switch {
	case i >= len(d):
		return nil, errEOF
	case d[i] == '0':
		i++
	case '1' <= d[i] && d[i] <= '9':
		i = digits(d, i+1)
	default:
		return nil, p.errorf(i, "invalid character %s in numeric literal", quoteByte(d[i]))
	}
	intDigits := i - intStart
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) {
			return nil, errEOF
		}
		if !isDigit(d[i]) {
			return nil, p.errorf(i, "invalid character %s after decimal point in numeric literal", quoteByte(d[i]))
		}
		i = digits(d, i)
	}
	exponent := i < len(d) && (d[i] == 'e' || d[i] == 'E')
	if exponent {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) {
			return nil, errEOF
		}
		if !isDigit(d[i]) {
			return nil, p.errorf(i, "invalid character %s in exponent of numeric literal", quoteByte(d[i]))
		}
		i = digits(d, i)
	}
	p.pos = i
	n := json.Number(d[start:i])
	// Only an exponent or more than 308 integer digits can pass the
	// largest float64, about 1.8e308.
	if p.trie == nil && (exponent || intDigits > 308) {
		if _, err := strconv.ParseFloat(string(n), 64); err != nil {
			p.c.hugeNumber(p.pointer(), n)
		}
	}
	return n, nil
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// digits returns the index after the run of digits starting at i.
func digits(d []byte, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

// stringValue reads a string as a value. The few strings that recur in
// every request come back as shared values, which saves an allocation
// each.
func (p *parser) stringValue() (any, error) {
	start := p.pos + 1
	i, slow, err := p.scan()
	switch {
	case err != nil:
		return nil, err
	case slow:
		return p.strSlow(start, i)
	}
	p.pos = i + 1
	raw := p.data[start:i]
	if len(raw) <= maxCommon {
		if v, ok := commonValues[string(raw)]; ok {
			return v, nil
		}
	}
	return string(raw), nil
}

// str reads a string literal, a member name when key. The member names
// that recur in every message come back without a copy.
func (p *parser) str(key bool) (string, error) {
	start := p.pos + 1
	i, slow, err := p.scan()
	switch {
	case err != nil:
		return "", err
	case slow:
		return p.strSlow(start, i)
	}
	p.pos = i + 1
	raw := p.data[start:i]
	if key && len(raw) <= maxCommon {
		if k, ok := commonKeys[string(raw)]; ok {
			return k, nil
		}
	}
	return string(raw), nil
}

// scan looks for the end of the string literal at p.pos. It returns the
// index of the closing quote, or, with slow set, of the first escape or
// invalid UTF-8 byte, from where strSlow must decode.
func (p *parser) scan() (int, bool, error) {
	d, plain := p.data, p.plain
	for i := p.pos + 1; ; {
		for i < len(d) && plain[d[i]] {
			i++
		}
		if i >= len(d) {
			return 0, false, errEOF
		}
		switch b := d[i]; {
		case b == '"':
			return i, false, nil
		case b == '\\':
			return i, true, nil
		case b < 0x20:
			return 0, false, p.errorf(i, "invalid character %s in string literal", quoteByte(b))
		}
		// Non-ASCII in input that is not all valid UTF-8.
		r, size := utf8.DecodeRune(d[i:])
		if r == utf8.RuneError && size == 1 {
			return i, true, nil
		}
		i += size
	}
}

// plainASCII marks the bytes a string literal may hold that need no
// closer look: not the closing quote, a backslash or a control character,
// and ASCII. plainUTF8 also passes every non-ASCII byte, for input already
// known to be valid UTF-8.
var plainASCII, plainUTF8 = func() (a, u [256]bool) {
	for b := range 256 {
		a[b] = b >= 0x20 && b < utf8.RuneSelf && b != '"' && b != '\\'
		u[b] = a[b] || b >= utf8.RuneSelf
	}
	return a, u
}()

// maxCommon is the length of the longest common key or value.
const maxCommon = 12

// commonKeys are the member names found in nearly every message, and
// commonValues the string values.
var commonKeys, commonValues = func() (map[string]string, map[string]any) {
	keys, values := map[string]string{}, map[string]any{}
	for _, s := range []string{"messages", "role", "content", "type", "text", "data", "mimeType",
		"maxTokens", "systemPrompt", "id", "name", "input", "toolUseId", "model", "stopReason", "_meta"} {
		keys[s] = s
	}
	for _, s := range []string{"user", "assistant", "text", "image", "audio", "tool_use", "tool_result",
		"object", "string", "auto", "none", "endTurn", "toolUse"} {
		values[s] = s
	}
	return keys, values
}()

// strSlow decodes the rest of a string from i, where the first escape or
// invalid byte is, into a buffer already holding d[start:i].
func (p *parser) strSlow(start, i int) (string, error) {
	d := p.data
	buf := make([]byte, 0, len(d[start:i])+16)
	buf = append(buf, d[start:i]...)
	for i < len(d) {
		switch b := d[i]; {
		case b == '"':
			p.pos = i + 1
			return string(buf), nil
		case b == '\\':
			if i+1 >= len(d) {
				return "", errEOF
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := p.hex4(i + 2)
				if err != nil {
					return "", err
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A pair needs the next escape to be its other half;
					// otherwise this half alone becomes U+FFFD.
					if r2, ok := escapedRune(d, i); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							buf = utf8.AppendRune(buf, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
				continue
			default:
				return "", p.errorf(i+1, "invalid character %s in string escape code", quoteByte(e))
			}
			i += 2
		case b < 0x20:
			return "", p.errorf(i, "invalid character %s in string literal", quoteByte(b))
		case b < utf8.RuneSelf:
			buf = append(buf, b)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, d[i:i+size]...)
			}
			i += size
		}
	}
	return "", errEOF
}

// hex4 reads the four hex digits of a \u escape starting at i.
func (p *parser) hex4(i int) (rune, error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(p.data) {
			return 0, errEOF
		}
		h, ok := unhex(p.data[j])
		if !ok {
			return 0, p.errorf(j, "invalid character %s in \\u hexadecimal character escape", quoteByte(p.data[j]))
		}
		r = r<<4 | h
	}
	return r, nil
}

// escapedRune reads a complete \uXXXX escape at i, if there is one.
func escapedRune(d []byte, i int) (rune, bool) {
	if i+6 > len(d) || d[i] != '\\' || d[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, b := range d[i+2 : i+6] {
		h, ok := unhex(b)
		if !ok {
			return 0, false
		}
		r = r<<4 | h
	}
	return r, true
}

func unhex(b byte) (rune, bool) {
	switch {
	case '0' <= b && b <= '9':
		return rune(b - '0'), true
	case 'a' <= b && b <= 'f':
		return rune(b-'a') + 10, true
	case 'A' <= b && b <= 'F':
		return rune(b-'A') + 10, true
	}
	return 0, false
}

// errorf makes a syntax error at byte offset off.
func (p *parser) errorf(off int, format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), offset: off}
}

// quoteByte renders one input byte for a syntax error message.
func quoteByte(b byte) string {
	if b == '\'' {
		return `'\''`
	}
	if b == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(b)))
	return "'" + s[1:len(s)-1] + "'"
}
