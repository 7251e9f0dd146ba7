package validate

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"
)

// The check of a form's answer (an accepted ElicitResult's content) and of
// a field's default against the field. Problems name the rule broken and
// never the value: an answer is what the user typed.

// problemKind says which rule a value breaks.
type problemKind int

const (
	probType       problemKind = iota + 1 // not the field's type
	probConstraint                        // length, bounds, format, item count
	probOption                            // not one of the options
)

// problem is what is wrong with a value; msg is empty when nothing is.
type problem struct {
	kind problemKind
	msg  string
}

func problemOf(kind problemKind, format string, args ...any) problem {
	return problem{kind, fmt.Sprintf(format, args...)}
}

// check reports the first problem of value v for field f.
func (f *field) check(v any) problem {
	switch f.kind {
	case "string":
		s, ok := v.(string)
		if !ok {
			return problemOf(probType, "must be a string, got %s", kindOf(v))
		}
		return f.checkString(s)
	case "number", "integer":
		return f.checkNumber(v)
	case "boolean":
		if _, ok := v.(bool); !ok {
			return problemOf(probType, "must be a boolean, got %s", kindOf(v))
		}
		return problem{}
	case "array":
		return f.checkSelection(v)
	}
	return problemOf(probType, "belongs to a field the request did not define usably")
}

// checkString checks a string value: options, length in characters, format.
func (f *field) checkString(s string) problem {
	if f.enum {
		if !slices.Contains(f.options, s) {
			return problemOf(probOption, "is not one of the options")
		}
		return problem{}
	}
	n := utf8.RuneCountInString(s)
	switch {
	case f.hasMinLen && n < f.minLen:
		return problemOf(probConstraint, "is shorter than minLength %d", f.minLen)
	case f.hasMaxLen && n > f.maxLen:
		return problemOf(probConstraint, "is longer than maxLength %d", f.maxLen)
	case f.format != "" && !validFormat(f.format, s):
		return problemOf(probConstraint, "is not a valid %s", f.format)
	}
	return problem{}
}

// checkNumber checks a number value: finite, whole for an integer field,
// within the bounds.
func (f *field) checkNumber(v any) problem {
	if !isNumberValue(v) {
		return problemOf(probType, "must be a number, got %s", kindOf(v))
	}
	x, ok := finite(v)
	switch {
	case !ok:
		return problemOf(probType, "is a number out of range")
	case f.kind == "integer" && x != math.Trunc(x):
		return problemOf(probType, "must be an integer")
	case f.hasMin && x < f.min:
		return problemOf(probConstraint, "is below minimum %g", f.min)
	case f.hasMax && x > f.max:
		return problemOf(probConstraint, "is above maximum %g", f.max)
	}
	return problem{}
}

// checkSelection checks a multi-select value: an array of distinct
// options, as many as minItems and maxItems allow.
func (f *field) checkSelection(v any) problem {
	list, ok := v.([]any)
	if !ok {
		return problemOf(probType, "must be an array of options, got %s", kindOf(v))
	}
	seen := map[string]bool{}
	for i, e := range list {
		s, ok := e.(string)
		switch {
		case !ok:
			return problemOf(probType, "item %d must be a string, got %s", i, kindOf(e))
		case !slices.Contains(f.options, s):
			return problemOf(probOption, "item %d is not one of the options", i)
		case seen[s]:
			return problemOf(probOption, "item %d repeats an option", i)
		}
		seen[s] = true
	}
	switch {
	case f.hasMinItems && len(list) < f.minItems:
		return problemOf(probConstraint, "has fewer items than minItems %d", f.minItems)
	case f.hasMaxItems && len(list) > f.maxItems:
		return problemOf(probConstraint, "has more items than maxItems %d", f.maxItems)
	}
	return problem{}
}

// answerRules maps a problem to the rule an answer breaks.
var answerRules = map[problemKind]ruleID{
	probType: ruleEliType, probConstraint: ruleEliValue, probOption: ruleEliOption,
}

// answer checks an accepted form's content (nil when absent) against the
// requested fields: no key the form did not ask for, every required field
// present (required lists them), every value fitting its field.
func (c *checker) answer(content map[string]any, fields map[string]*field, required []string) {
	for _, name := range slices.Sorted(maps.Keys(content)) {
		path := child("/content", name)
		f, ok := fields[name]
		if !ok {
			c.add(ruleEliExtraField, path, "the form has no such field")
			continue
		}
		v := content[name]
		if s, isStr := v.(string); isStr && len(s) > c.lim.MaxTextBytes {
			c.add(ruleLimitText, path, "text is %d bytes, limit %d", len(s), c.lim.MaxTextBytes)
			continue
		}
		if pr := f.check(v); pr.msg != "" {
			c.add(answerRules[pr.kind], path, "the value %s", pr.msg)
		}
	}
	for _, name := range required {
		if !has(content, name) {
			c.add(ruleEliRequired, child("/content", name), "a required field is missing")
		}
	}
}

// isNumberValue reports whether v is a JSON number, of any size.
func isNumberValue(v any) bool {
	_, ok := v.(json.Number)
	return ok
}

// validFormat reports whether s is a valid value of a form field's format.
// The checks are strict where the format is precise (RFC 3339 dates) and
// reasonable where it is not (an address a mail system accepts, an
// absolute URI of printable ASCII).
func validFormat(format, s string) bool {
	switch format {
	case "email":
		return validEmail(s)
	case "uri":
		return validURI(s)
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	}
	return true
}

// validEmail accepts a bare address (addr-spec, RFC 5322) with a dotted
// domain or a single label, and no display name or comments around it.
func validEmail(s string) bool {
	if !printable(s) {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// validURI accepts an absolute URI (RFC 3986): a scheme, and only
// printable ASCII that a URI may hold.
func validURI(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b <= ' ' || b >= 0x7f || b == '"' || b == '<' || b == '>' || b == '\\' || b == '^' || b == '`' || b == '{' || b == '|' || b == '}' {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// printable reports whether s holds no control, space-like separator
// other than the ASCII space, or invisible format character.
func printable(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || (r != ' ' && unicode.IsSpace(r)) {
			return false
		}
	}
	return true
}
