package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestEditDocRoundTrip: an unedited document applies back to exactly the
// original, whatever the text holds (the editor sees YAML, the firewall
// forwards JSON, and nothing may drift in between).
func TestEditDocRoundTrip(t *testing.T) {
	texts := []string{
		"plain", "two\nlines\n", "no final newline\nhere", "  leading spaces\n", "trailing spaces  \nx",
		"tabs\tinside\n\tand leading", "\x1b[2J escape", "bidi \u202e override", "# not a comment", "key: value",
		"- a list?", "'quotes' \"both\"", "", "\n\n", "123", "true", "null", "emoji 🦓\r\nCRLF",
	}
	for _, text := range texts {
		req := map[string]any{"maxTokens": 100, "systemPrompt": text, "stopSequences": []string{text},
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}}}
		if text == "" {
			delete(req, "systemPrompt")
			delete(req, "stopSequences")
		}
		raw, _ := json.Marshal(req)
		it := review.Item{ID: "rv-0000000000000001", Stage: review.StageRequest, Request: raw}
		doc, err := editDoc(it, raw)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		got, err := applyEdit(it, raw, doc)
		if err != nil {
			t.Fatalf("%q: applying the unchanged document: %v\n%s", text, err, doc)
		}
		if !sameJSON(t, raw, got) {
			t.Errorf("%q: round trip changed the request:\n%s\n%s\ndocument:\n%s", text, raw, got, doc)
		}
		if strings.Contains(string(doc), "\x1b") {
			t.Errorf("%q: the document holds a raw escape character", text)
		}
	}
}

func TestApplyEditRefusals(t *testing.T) {
	raw := json.RawMessage(`{"maxTokens":300,"tools":[{"name":"lookup","inputSchema":{"type":"object"}}],"messages":[
	 {"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]},
	 {"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"lookup","input":{"q":"png"}}]},
	 {"role":"user","content":[{"type":"tool_result","toolUseId":"c1","content":[{"type":"text","text":"a format"}]}]}]}`)
	it := review.Item{ID: "rv-0000000000000001", Stage: review.StageRequest, Request: raw}
	doc, err := editDoc(it, raw)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, from, to, want string }{
		{"a guarded tool_use", `lookup id=c1`, `lookup id=c2`, "message 2, block 1 is a guarded tool_use block"},
		{"a guarded tool result's text", `a format`, `another`, "message 3, block 1 is a guarded tool_result block"},
		{"a role", "role: assistant", "role: user", "message 2: its role cannot change"},
		{"zero maxTokens", "maxTokens: 300", "maxTokens: 0", "maxTokens must be a positive"},
		{"an unknown key", "maxTokens: 300", "maxTokens: 300\ntemperature: 2", "field temperature not found"},
		{"a removed message", "  - role: assistant\n    content:\n      - guarded: '[tool_use lookup id=c1] input: {\"q\":\"png\"}'\n", "", "messages cannot be added or removed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			edited := strings.Replace(string(doc), tc.from, tc.to, 1)
			if edited == string(doc) {
				t.Fatalf("%q is not in the document:\n%s", tc.from, doc)
			}
			if _, err := applyEdit(it, raw, []byte(edited)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want it to contain %q", err, tc.want)
			}
		})
	}
	edited := strings.Replace(string(doc), "What is this?", "What format is this?", 1)
	got, err := applyEdit(it, raw, []byte(edited))
	if err != nil || !strings.Contains(string(got), `"text":"What format is this?"`) || !strings.Contains(string(got), `"tools"`) {
		t.Errorf("text edit = %s, %v; want the new text and everything else kept", got, err)
	}
}

func TestLineDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	b := "1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n"
	want := "…\n  2\n  3\n- 4\n+ four\n  5\n  6\n…\n  8\n  9\n+ 10\n"
	if got := lineDiff(a, b); got != want {
		t.Errorf("lineDiff:\n%s\nwant:\n%s", got, want)
	}
	if got := lineDiff(a, a); got != "" {
		t.Errorf("lineDiff of equal texts = %q", got)
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
