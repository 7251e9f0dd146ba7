package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestURLFacts(t *testing.T) {
	tests := []struct {
		url  string
		want map[string]any
	}{
		{"https://Auth.Example.CO.UK:8443/x?y#z", map[string]any{"scheme": "https", "host": "auth.example.co.uk", "port": 8443,
			"userinfo": false, "registrable_domain": "example.co.uk", "punycode": false, "mixed_script": false, "unicode_host": "auth.example.co.uk"}},
		{"HTTP://user:pw@example.com", map[string]any{"scheme": "http", "host": "example.com", "port": nil,
			"userinfo": true, "registrable_domain": "example.com", "punycode": false, "mixed_script": false, "unicode_host": "example.com"}},
		{"https://bücher.example/", map[string]any{"scheme": "https", "host": "xn--bcher-kva.example", "port": nil,
			"userinfo": false, "registrable_domain": "xn--bcher-kva.example", "punycode": true, "mixed_script": false, "unicode_host": "bücher.example"}},
		{"https://xn--pple-43d.com/", map[string]any{"scheme": "https", "host": "xn--pple-43d.com", "port": nil,
			"userinfo": false, "registrable_domain": "xn--pple-43d.com", "punycode": true, "mixed_script": true, "unicode_host": "аpple.com"}},
		{"https://ΑΒΓ.example/", map[string]any{"scheme": "https", "host": "xn--mxacd.example", "port": nil,
			"userinfo": false, "registrable_domain": "xn--mxacd.example", "punycode": true, "mixed_script": false, "unicode_host": "αβγ.example"}},
		{"https://東京タワーmap.jp/", map[string]any{"scheme": "https", "host": "xn--map-tl4bpjwc921zmo2b.jp", "port": nil,
			"userinfo": false, "registrable_domain": "xn--map-tl4bpjwc921zmo2b.jp", "punycode": true, "mixed_script": false, "unicode_host": "東京タワーmap.jp"}},
		{"https://127.0.0.1:99/", map[string]any{"scheme": "https", "host": "127.0.0.1", "port": 99,
			"userinfo": false, "registrable_domain": "", "punycode": false, "mixed_script": false, "unicode_host": "127.0.0.1"}},
		{"javascript:alert(1)", map[string]any{"scheme": "javascript", "host": "", "port": nil,
			"userinfo": false, "registrable_domain": "", "punycode": false, "mixed_script": false, "unicode_host": ""}},
		{"https://co.uk/", map[string]any{"scheme": "https", "host": "co.uk", "port": nil,
			"userinfo": false, "registrable_domain": "", "punycode": false, "mixed_script": false, "unicode_host": "co.uk"}},
		{"%zz", map[string]any{"scheme": "", "host": "", "port": nil,
			"userinfo": false, "registrable_domain": "", "punycode": false, "mixed_script": false, "unicode_host": ""}},
	}
	for _, tt := range tests {
		got := urlFacts(map[string]any{"url": tt.url})
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %v\nwant %v", tt.url, got, tt.want)
		}
	}
	if got := urlFacts(map[string]any{"mode": "form"}); got != nil {
		t.Errorf("a form's url facts: %v, want nil", got)
	}
}

func TestFormFacts(t *testing.T) {
	var req map[string]any
	dec := json.NewDecoder(strings.NewReader(`{"mode":"form","message":"Tell us","requestedSchema":{"type":"object","required":["b"],"properties":{
		"b":{"type":"string","title":"B","description":"about b","format":"email","default":"x@example.com"},
		"a":{"type":"string","oneOf":[{"const":"1","title":"One"},{"const":"2","title":"Two"}]},
		"c":{"type":"array","items":{"anyOf":[{"const":"x","title":"Ex"}]}},
		"d":{"type":"string","enum":["p","q","r"],"enumNames":["P","Q","R"]},
		"pa\u200bss":{"type":"boolean"}}}}`))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		t.Fatal(err)
	}
	answer := map[string]any{"action": "accept", "content": map[string]any{"b": "me@example.com", "c": []any{"x"}, "d": "p", "pa\u200bss": true}}
	f := elicitationFacts(req, answer)
	fields := f["fields"].([]any)
	if len(fields) != 5 {
		t.Fatalf("fields %v", fields)
	}
	wantFields := []map[string]any{
		{"name": "a", "type": "string", "format": "", "title": "", "description": "", "required": false, "has_default": false, "enum_count": 2, "multi": false},
		{"name": "b", "type": "string", "format": "email", "title": "B", "description": "about b", "required": true, "has_default": true, "enum_count": 0, "multi": false},
		{"name": "c", "type": "array", "format": "", "title": "", "description": "", "required": false, "has_default": false, "enum_count": 1, "multi": true},
		{"name": "d", "type": "string", "format": "", "title": "", "description": "", "required": false, "has_default": false, "enum_count": 3, "multi": false},
	}
	for i, w := range wantFields {
		if !reflect.DeepEqual(fields[i], w) {
			t.Errorf("field %d: %v, want %v", i, fields[i], w)
		}
	}
	checks := map[string]any{
		"mode":                "form",
		"message_bytes":       7,
		"field_names":         []any{"a", "b", "c", "d", "pa\u200bss"},
		"folded_field_names":  []any{"pass"},
		"texts":               []any{"Tell us", "One", "Two", "B", "about b", "Ex", "P", "Q", "R"},
		"secret_stems":        []any{},
		"url":                 nil,
		"answer_texts":        []any{"me@example.com", "x", "p"},
		"answer_secret_stems": []any{},
	}
	for k, want := range checks {
		if !reflect.DeepEqual(f[k], want) {
			t.Errorf("%s = %#v, want %#v", k, f[k], want)
		}
	}
	if declined := elicitationFacts(req, map[string]any{"action": "decline"}); len(declined["answer_texts"].([]any)) != 0 {
		t.Errorf("a declined answer has texts: %v", declined["answer_texts"])
	}
}
