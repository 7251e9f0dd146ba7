package validate

import (
	"maps"
	"math"
	"slices"
	"strconv"
)

// The restricted schema of form-mode elicitation (requestedSchema): a flat
// object whose properties are primitives (string, number, integer,
// boolean) or the enum forms of SEP-1330, each with the constraints and
// default (SEP-1034) its type allows. Anything a host would have to
// interpret as general JSON Schema (nesting, $ref, combinators, keywords
// of its own) is refused: a host renders these fields to a person, and
// the firewall checks the answer against the same reading.

// field is one property of a requested schema, as far as the checks of
// defaults and answers need it. Bounds are absent (has* false) unless the
// schema sets them to a usable value.
type field struct {
	kind    string // "string", "number", "integer", "boolean" or "array" (multi-select)
	format  string // string only: "", "email", "uri", "date" or "date-time"
	options []string
	enum    bool // options restrict the value (single-select, or the items of a multi-select)

	minLen, maxLen       int
	hasMinLen, hasMaxLen bool
	min, max             float64
	hasMin, hasMax       bool
	minItems, maxItems   int
	hasMinItems          bool
	hasMaxItems          bool
}

// schemaPath is where the requested schema sits in the params.
const schemaPath = "/requestedSchema"

// schemaKeys are the members requestedSchema may have: the spec's, plus
// title and description, which JSON Schema generators (pydantic, zod) put
// on the root and hosts show as the form's heading, and
// additionalProperties: false, which zod adds and which says what the
// answer check enforces anyway.
var schemaKeys = keys("$schema", "type", "properties", "required", "title", "description", "additionalProperties")

// nesting are the keywords that would make a field more than one flat
// value; they are reported as such rather than as unknown.
var nesting = keys("properties", "items", "$ref", "$defs", "definitions", "allOf", "anyOf", "oneOf",
	"not", "if", "then", "else", "additionalProperties", "patternProperties", "prefixItems", "contains",
	"dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "propertyNames")

// form checks form mode's requestedSchema.
func (c *checker) form(doc Document) {
	if !c.required(ruleEliSchema, "", doc, "requestedSchema", kindObject) {
		return
	}
	s := doc["requestedSchema"].(map[string]any)
	c.unknownKeys(schemaPath, s, schemaKeys)
	if t, ok := s["type"].(string); !ok || t != "object" {
		c.add(ruleEliSchema, schemaPath+"/type", "requestedSchema.type must be \"object\"")
	}
	c.optional(ruleEliSchema, schemaPath, s, "$schema", kindString)
	if v, ok := s["additionalProperties"]; ok && v != false {
		c.add(ruleEliSchema, schemaPath+"/additionalProperties", "additionalProperties may only be false: a form has the fields it lists")
	}
	for _, k := range []string{"title", "description"} {
		if c.optional(ruleEliSchema, schemaPath, s, k, kindString) {
			c.label(schemaPath, k, s[k].(string))
		}
	}
	if !c.required(ruleEliSchema, schemaPath, s, "properties", kindObject) {
		return
	}
	props := s["properties"].(map[string]any)
	names := slices.Sorted(maps.Keys(props))
	if len(names) > c.lim.MaxFields {
		c.add(ruleLimitFields, schemaPath+"/properties", "%d fields, limit %d", len(names), c.lim.MaxFields)
		names = names[:c.lim.MaxFields]
	}
	for _, name := range names {
		c.property(name, props[name])
	}
	c.requiredNames(s, props)
}

// requiredNames checks requestedSchema.required: property names, each
// once.
func (c *checker) requiredNames(s, props map[string]any) {
	const path = schemaPath + "/required"
	if !c.optional(ruleEliSchema, schemaPath, s, "required", kindArray) {
		return
	}
	seen := map[string]bool{}
	for i, v := range s["required"].([]any) {
		name, ok := v.(string)
		switch {
		case !ok:
			c.add(ruleEliSchema, index(path, i), "required must list property names, got %s", kindOf(v))
		case seen[name]:
			c.add(ruleEliSchema, index(path, i), "required lists %s twice", quote(name))
		case !has(props, name):
			c.add(ruleEliSchema, index(path, i), "required names %s, which is not a property", quote(name))
		}
		seen[name] = true
	}
}

// fieldKinds are the property types a form may have.
var fieldKinds = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "array": true}

// The members a property may have, by type and enum form (SEP-1330),
// built once.
var (
	baseFieldKeys   = keys("type", "title", "description", "default")
	stringEnumKeys  = baseFieldKeys.with("enum", "enumNames")
	stringOneOfKeys = baseFieldKeys.with("oneOf")
	stringKeys      = baseFieldKeys.with("minLength", "maxLength", "format")
	numberKeys      = baseFieldKeys.with("minimum", "maximum")
	arrayKeys       = baseFieldKeys.with("items", "minItems", "maxItems")
	optionKeys      = keys("const", "title")
	titledItemsKeys = keys("type", "anyOf")
	enumItemsKeys   = keys("type", "enum")
)

// fieldKeys returns the members a property of kind may have, given which
// enum form it uses.
func fieldKeys(kind string, p map[string]any) keySet {
	switch {
	case kind == "string" && has(p, "enum"):
		return stringEnumKeys
	case kind == "string" && has(p, "oneOf"):
		return stringOneOfKeys
	case kind == "string":
		return stringKeys
	case kind == "number" || kind == "integer":
		return numberKeys
	case kind == "array":
		return arrayKeys
	}
	return baseFieldKeys
}

// property checks one property of the form and its default.
func (c *checker) property(name string, v any) {
	path := child(schemaPath+"/properties", name)
	if name == "" {
		c.add(ruleEliField, path, "a field name is empty")
	}
	if len(name) > c.lim.MaxLabelBytes {
		c.add(ruleLimitLabel, path, "field name is %d bytes, limit %d", len(name), c.lim.MaxLabelBytes)
	}
	p, ok := v.(map[string]any)
	if !ok {
		c.add(ruleEliField, path, "a field must be an object, got %s", kindOf(v))
		return
	}
	kind, _ := p["type"].(string)
	if !fieldKinds[kind] {
		c.add(ruleEliField, path+"/type", "type must be string, number, integer, boolean or array (a multi-select): a form is flat")
		return
	}
	c.fieldMembers(path, p, fieldKeys(kind, p))
	for _, k := range []string{"title", "description"} {
		if c.optional(ruleEliField, path, p, k, kindString) {
			c.label(path, k, p[k].(string))
		}
	}
	f := c.fieldSpec(path, kind, p)
	if d, ok := p["default"]; ok {
		if pr := f.check(d); pr.msg != "" {
			c.add(ruleEliDefault, path+"/default", "default %s", pr.msg)
		}
	}
}

// fieldMembers reports every member of property p that its type does not
// allow: a nesting keyword as such, any other as unknown.
func (c *checker) fieldMembers(path string, p map[string]any, allowed keySet) {
	for _, k := range extraKeys(p, allowed) {
		if nesting[k] {
			c.add(ruleEliField, child(path, k), "%s is not allowed here: a form field is one flat value", k)
		} else {
			c.add(c.unknownRule, child(path, k), "unknown field %s", quote(k))
		}
	}
}

// fieldSpec checks the constraints and options of property p at path and
// returns what a value must satisfy.
func (c *checker) fieldSpec(path, kind string, p map[string]any) field {
	f := field{kind: kind}
	switch kind {
	case "string":
		c.stringSpec(path, p, &f)
	case "number", "integer":
		f.min, f.hasMin = c.bound(path, p, "minimum")
		f.max, f.hasMax = c.bound(path, p, "maximum")
		if f.hasMin && f.hasMax && f.min > f.max {
			c.add(ruleEliConstraint, path+"/maximum", "maximum is below minimum")
		}
	case "array":
		f.minItems, f.hasMinItems = c.count(path, p, "minItems")
		f.maxItems, f.hasMaxItems = c.count(path, p, "maxItems")
		if f.hasMinItems && f.hasMaxItems && f.minItems > f.maxItems {
			c.add(ruleEliConstraint, path+"/maxItems", "maxItems is below minItems")
		}
		c.items(path, p, &f)
	}
	return f
}

// formats are the string formats a form field may ask for.
var formats = map[string]bool{"email": true, "uri": true, "date": true, "date-time": true}

// stringSpec reads a string field: plain with its length and format, or
// one of the single-select forms.
func (c *checker) stringSpec(path string, p map[string]any, f *field) {
	switch {
	case has(p, "enum"):
		f.options, f.enum = c.enumValues(path, p, "enum"), true
		if c.optional(ruleEliEnum, path, p, "enumNames", kindArray) {
			names := p["enumNames"].([]any)
			if len(names) != len(p["enum"].([]any)) {
				c.add(ruleEliEnum, path+"/enumNames", "enumNames must have one name per enum value")
			}
			for i, n := range names {
				c.optionLabel(index(path+"/enumNames", i), n)
			}
		}
		return
	case has(p, "oneOf"):
		f.options, f.enum = c.titledOptions(path, p, "oneOf"), true
		return
	}
	f.minLen, f.hasMinLen = c.count(path, p, "minLength")
	f.maxLen, f.hasMaxLen = c.count(path, p, "maxLength")
	if f.hasMinLen && f.hasMaxLen && f.minLen > f.maxLen {
		c.add(ruleEliConstraint, path+"/maxLength", "maxLength is below minLength")
	}
	if v, ok := p["format"]; ok {
		s, isStr := v.(string)
		if !isStr || !formats[s] {
			c.add(ruleEliConstraint, path+"/format", "format must be email, uri, date or date-time")
		} else {
			f.format = s
		}
	}
}

// items reads a multi-select's items: {type: "string", enum: [...]} or
// {anyOf: [{const, title}...]} (type "string" allowed there too, as SDKs
// send it).
func (c *checker) items(path string, p map[string]any, f *field) {
	f.enum = true
	if !c.required(ruleEliEnum, path, p, "items", kindObject) {
		return
	}
	ipath := path + "/items"
	it := p["items"].(map[string]any)
	titled := has(it, "anyOf")
	if titled {
		c.unknownKeys(ipath, it, titledItemsKeys)
		f.options = c.titledOptions(ipath, it, "anyOf")
	} else {
		c.unknownKeys(ipath, it, enumItemsKeys)
		f.options = c.enumValues(ipath, it, "enum")
	}
	if t, present := it["type"]; (present || !titled) && t != "string" {
		c.add(ruleEliEnum, ipath+"/type", "items.type must be \"string\"")
	}
}

// enumValues checks an array of string options (enum) and returns them.
func (c *checker) enumValues(path string, p map[string]any, key string) []string {
	var out []string
	seen := map[string]bool{}
	for i, v := range c.optionList(path, p, key) {
		s, ok := v.(string)
		switch {
		case !ok:
			c.add(ruleEliEnum, index(child(path, key), i), "an option must be a string, got %s", kindOf(v))
			continue
		case seen[s]:
			c.add(ruleEliEnum, index(child(path, key), i), "option %s is listed twice", quote(s))
		}
		c.label(child(path, key), strconv.Itoa(i), s)
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// titledOptions checks an array of {const, title} options (oneOf, anyOf)
// and returns the values.
func (c *checker) titledOptions(path string, p map[string]any, key string) []string {
	var out []string
	seen := map[string]bool{}
	for i, v := range c.optionList(path, p, key) {
		opath := index(child(path, key), i)
		o, ok := v.(map[string]any)
		if !ok {
			c.add(ruleEliEnum, opath, "an option must be an object with const and title, got %s", kindOf(v))
			continue
		}
		c.unknownKeys(opath, o, optionKeys)
		if c.required(ruleEliEnum, opath, o, "title", kindString) {
			c.optionLabel(opath+"/title", o["title"])
		}
		if !c.required(ruleEliEnum, opath, o, "const", kindString) {
			continue
		}
		s := o["const"].(string)
		switch {
		case s == "":
			c.add(ruleEliEnum, opath+"/const", "an option's const is empty")
		case seen[s]:
			c.add(ruleEliEnum, opath+"/const", "option %s is listed twice", quote(s))
		}
		c.label(opath, "const", s)
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// optionList checks that key holds an array of options, not empty and
// within MaxEnumValues, and returns those to check (none when it holds no
// array).
func (c *checker) optionList(path string, p map[string]any, key string) []any {
	if !c.required(ruleEliEnum, path, p, key, kindArray) {
		return nil
	}
	list := p[key].([]any)
	switch {
	case len(list) == 0:
		c.add(ruleEliEnum, child(path, key), "%s has no options", key)
	case len(list) > c.lim.MaxEnumValues:
		c.add(ruleLimitEnum, child(path, key), "%d options, limit %d", len(list), c.lim.MaxEnumValues)
		list = list[:c.lim.MaxEnumValues]
	}
	return list
}

// optionLabel checks an option's display name at path.
func (c *checker) optionLabel(path string, v any) {
	s, ok := v.(string)
	if !ok {
		c.add(ruleEliEnum, path, "an option's name must be a string, got %s", kindOf(v))
		return
	}
	if len(s) > c.lim.MaxLabelBytes {
		c.add(ruleLimitLabel, path, "%d bytes, limit %d", len(s), c.lim.MaxLabelBytes)
	}
}

// bound reads minimum or maximum: a number.
func (c *checker) bound(path string, p map[string]any, key string) (float64, bool) {
	if !c.optional(ruleEliConstraint, path, p, key, kindNumber) {
		return 0, false
	}
	f, _ := finite(p[key])
	return f, true
}

// count reads minLength, maxLength, minItems or maxItems: a non-negative
// integer.
func (c *checker) count(path string, p map[string]any, key string) (int, bool) {
	v, ok := p[key]
	if !ok {
		return 0, false
	}
	n, isInt := nonNegativeInt(v)
	if !isInt {
		c.add(ruleEliConstraint, child(path, key), "%s must be a non-negative integer", key)
		return 0, false
	}
	return n, true
}

// nonNegativeInt reads a JSON number that is a whole number from 0 up
// (1.0 and 1e2 count, as JSON Schema counts them), capped at MaxInt32 so
// that a bound past any real length still compares safely.
func nonNegativeInt(v any) (int, bool) {
	f, ok := finite(v)
	if !ok || f < 0 || f != math.Trunc(f) {
		return 0, false
	}
	return int(min(f, math.MaxInt32)), true
}

// formFields reads the fields of an elicitation request for checking an
// answer. It trusts nothing: a request that was not valid yields what can
// be read of it, and a property it cannot read accepts no value at all.
func formFields(request Document) map[string]*field {
	out := map[string]*field{}
	s, _ := request["requestedSchema"].(map[string]any)
	props, _ := s["properties"].(map[string]any)
	scratch := &checker{lim: DefaultLimits(), unknownRule: ruleEliUnknownKey, metaRule: ruleEliMeta}
	for name, v := range props {
		p, _ := v.(map[string]any)
		kind, _ := p["type"].(string)
		if !fieldKinds[kind] {
			out[name] = &field{kind: "invalid"}
			continue
		}
		f := scratch.fieldSpec("", kind, p)
		out[name] = &f
		scratch.out = scratch.out[:0]
	}
	return out
}

// requiredFields lists requestedSchema.required, in order, once each.
func requiredFields(request Document) []string {
	s, _ := request["requestedSchema"].(map[string]any)
	list, _ := s["required"].([]any)
	var out []string
	for _, v := range list {
		if name, ok := v.(string); ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
