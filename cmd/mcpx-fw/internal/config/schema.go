package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"go.yaml.in/yaml/v3"
)

// checkFile holds the file against Config's keys, as UnmarshalExact would,
// but says where: each key Config does not have (with the nearest one it
// has at that level) and each value that does not decode into its key's
// type, at its line.
func (p *problems) checkFile() {
	root := resolved(p.doc)
	switch {
	case root.Tag == "!!null":
	case root.Kind != yaml.MappingNode:
		p.at(root.Line, "the file holds %s, where mcpx-fw reads keys such as servers: and policy:", kindOf(root))
	default:
		p.checkMapping("", root, reflect.TypeFor[Config]())
	}
}

// checkNode checks the value node of key (written at line) against typ.
// A mapping is walked key by key, a list entry by entry; any other value,
// and a value of another shape than typ's, is decoded as viper would.
func (p *problems) checkNode(key string, line int, node *yaml.Node, typ reflect.Type) {
	node = resolved(node)
	switch {
	case node.Tag == "!!null":
	case node.Kind == yaml.MappingNode && (typ.Kind() == reflect.Struct && typ != timeType || typ.Kind() == reflect.Map):
		p.checkMapping(key, node, typ)
	case node.Kind == yaml.SequenceNode && typ.Kind() == reflect.Slice:
		for i, item := range node.Content {
			p.checkNode(fmt.Sprintf("%s[%d]", key, i), item.Line, item, typ.Elem())
		}
	default:
		var v any
		if node.Decode(&v) != nil || !fits(v, typ) {
			p.undecoded(line, key, typ, found(node, typ))
		}
	}
}

// checkMapping checks each key of a mapping, for a struct (its keys are
// the fields' tags) or a map (any key).
func (p *problems) checkMapping(key string, node *yaml.Node, typ reflect.Type) {
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		if k.Tag == "!!merge" { // <<: *anchor merges its keys here
			p.checkMerge(key, v, typ)
			continue
		}
		p.checkKey(key, k.Value, k.Line, v, typ)
	}
}

func (p *problems) checkMerge(key string, node *yaml.Node, typ reflect.Type) {
	node = resolved(node)
	if node.Kind == yaml.SequenceNode {
		for _, m := range node.Content {
			p.checkNode(key, m.Line, m, typ)
		}
		return
	}
	p.checkNode(key, node.Line, node, typ)
}

// checkKey checks one key (name, written at line) of a mapping for typ. A
// dotted name is a path, as viper reads it: policy.dir: x sets dir under
// policy.
func (p *problems) checkKey(key, name string, line int, value *yaml.Node, typ reflect.Type) {
	first, rest, dotted := strings.Cut(name, ".")
	sub, known := keyType(typ, first)
	if !known {
		p.at(line, "unknown key %s%s", join(key, first), suggestion(first, typ))
		return
	}
	switch {
	case !dotted:
		p.checkNode(join(key, first), line, value, sub)
	case sub.Kind() == reflect.Struct && sub != timeType || sub.Kind() == reflect.Map:
		p.checkKey(join(key, first), rest, line, value, sub)
	default:
		p.undecoded(line, join(key, name), sub, "a key with a '.', which is read as a key under "+join(key, first))
	}
}

// keyType is the type of name's value in a mapping for typ: the field it
// names in a struct, any key's in a map.
func keyType(typ reflect.Type, name string) (reflect.Type, bool) {
	if typ.Kind() == reflect.Map {
		return typ.Elem(), true
	}
	t, ok := fieldsOf(typ)[strings.ToLower(name)]
	return t, ok
}

func join(key, name string) string {
	if key == "" {
		return name
	}
	return key + "." + name
}

// fieldsOf maps a struct's keys, lower case, to their fields' types, as
// mapstructure matches them: a field's tag, or its name untagged; a
// squashed field's keys are its parent's.
func fieldsOf(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case opts == "squash":
			for k, t := range fieldsOf(f.Type) {
				out[k] = t
			}
		case !f.IsExported() || tag == "-":
		case tag == "":
			out[strings.ToLower(f.Name)] = f.Type
		default:
			out[strings.ToLower(tag)] = f.Type
		}
	}
	return out
}

// checkEnv checks each MCPXFW_* variable viper reads (one for every key of
// keys that is a leaf of Config) as checkFile checks the file's values.
func (p *problems) checkEnv(keys []string) {
	leaves := map[string]reflect.Type{}
	leafTypes(reflect.TypeFor[Config](), "", leaves)
	for _, key := range keys {
		typ, ok := leaves[key]
		val := os.Getenv(envName(key))
		if ok && val != "" && !fits(val, typ) {
			p.notDecoded = append(p.notDecoded, key)
			p.list = append(p.list, problem{0, fmt.Sprintf("%s: %s: want %s, found a value that is not one", envName(key), key, describe(typ))})
		}
	}
}

// leafTypes collects the keys of typ that hold one value (or a list),
// dotted under prefix; maps, whose keys the file chooses, are left out.
func leafTypes(typ reflect.Type, prefix string, out map[string]reflect.Type) {
	for name, t := range fieldsOf(typ) {
		switch {
		case t.Kind() == reflect.Struct && t != timeType:
			leafTypes(t, join(prefix, name), out)
		case t.Kind() != reflect.Map:
			out[join(prefix, name)] = t
		}
	}
}

// fits tells whether Load's decoding (viper's, with decodeHooks) takes v
// as a value of typ.
func fits(v any, typ reflect.Type) bool {
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		WeaklyTypedInput: true, ErrorUnused: true, DecodeHook: decodeHooks(), Result: reflect.New(typ).Interface()})
	return err == nil && dec.Decode(v) == nil
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[time.Time]()
)

// describe says what a key of typ takes, in the config's words.
func describe(typ reflect.Type) string {
	switch typ.Kind() {
	case reflect.Int64:
		if typ == durationType {
			return "a duration such as 250ms or 10m"
		}
		return "a whole number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	}
	return "a mapping (keys and values)"
}

// found says what a value that does not decode into typ is: its kind,
// never its text, which may be a secret written under the wrong key or in
// the wrong shape (a token where a duration goes, a header as a list).
func found(node *yaml.Node, typ reflect.Type) string {
	switch kind := kindOf(node); {
	case node.Tag == "!!str" && typ == durationType:
		return "a string that is not one"
	case kind == describe(typ):
		return "one out of range"
	default:
		return kind
	}
}

// kindOf is the kind of value node is, in the words describe uses.
func kindOf(node *yaml.Node) string {
	switch node.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	switch node.Tag {
	case "!!str":
		return "a string"
	case "!!int":
		return "a whole number"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean (true or false)"
	case "!!timestamp":
		return "a date"
	}
	return "a value of another kind"
}
