package render

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
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
		"csi \u009b31m and nel \u0085", "zero\u200bwidth\u200d join\ufeff", "tag \U000e0041\U000e007f", "vs \ufe0f\U000e0100",
		"isolate \u2066x\u2069 mark \u200e\u061c", "del \x7f bs \b nul \x00", "ls \u2028 ps \u2029", "soft\u00adhyphen",
		`typed \x1b and \e`, "osc \x1b]0;title\x07 link \x1b]8;;https://evil\x1b\\x\x1b]8;;\x1b\\",
		"multi\nline \x1b[2J\nwith \u202e\n", strings.Repeat("long line with \u202e and spaces ", 20),
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
		doc, err := EditDoc(it, raw)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		got, err := ApplyEdit(it, raw, doc)
		if err != nil {
			t.Fatalf("%q: applying the unchanged document: %v\n%s", text, err, doc)
		}
		if !sameJSON(t, raw, got) {
			t.Errorf("%q: round trip changed the request:\n%s\n%s\ndocument:\n%s", text, raw, got, doc)
		}
		if bad := rendertest.Obeyable(string(doc)); bad != "" {
			t.Errorf("%q: the document holds %s as it is:\n%s", text, bad, doc)
		}
	}
}

// TestEditDocKeepsHostileText: an edit made in the document (here the
// text of one block) keeps, byte for byte, the escapes' meaning in every
// other string, and guarded blocks whose ids, names, input and nested
// resources hold control and format characters read back as guarded.
func TestEditDocKeepsHostileText(t *testing.T) {
	bad := "\x1b[2J\x1b[H\u202e\u200b\u009b\U000e0041\t\r"
	req := map[string]any{"maxTokens": 100, "systemPrompt": "sys" + bad, "stopSequences": []string{"stop" + bad},
		"tools": []any{map[string]any{"name": "t" + bad, "inputSchema": map[string]any{"type": "object"}}},
		"messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "text" + bad}},
			map[string]any{"role": "assistant", "content": map[string]any{"type": "tool_use", "id": "id" + bad, "name": "t" + bad,
				"input": map[string]any{"k" + bad: "v" + bad}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "toolUseId": "id" + bad,
				"content":           []any{map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///r" + bad, "text": "r" + bad}}},
				"structuredContent": map[string]any{"s" + bad: bad}}}},
			map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "plain"}},
		}}
	raw, _ := json.Marshal(req)
	it := review.Item{ID: "rv-0000000000000001", Stage: review.StageRequest, Request: raw}
	doc, err := EditDoc(it, raw)
	if err != nil {
		t.Fatal(err)
	}
	if bad := rendertest.Obeyable(string(doc)); bad != "" {
		t.Fatalf("the document holds %s as it is:\n%s", bad, doc)
	}
	edited := strings.Replace(string(doc), "text: plain", "text: edited", 1)
	got, err := ApplyEdit(it, raw, []byte(edited))
	if err != nil {
		t.Fatalf("the edit is refused: %v\n%s", err, edited)
	}
	req["messages"].([]any)[3].(map[string]any)["content"].(map[string]any)["text"] = "edited"
	want, _ := json.Marshal(req)
	if !sameJSON(t, want, got) {
		t.Errorf("the edit changed more than the text:\n%s\n%s\ndocument:\n%s", want, got, edited)
	}
}

func TestApplyEditRefusals(t *testing.T) {
	raw := json.RawMessage(`{"maxTokens":300,"tools":[{"name":"lookup","inputSchema":{"type":"object"}}],"messages":[
	 {"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]},
	 {"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"lookup","input":{"q":"png"}}]},
	 {"role":"user","content":[{"type":"tool_result","toolUseId":"c1","content":[{"type":"text","text":"a format"}]}]}]}`)
	it := review.Item{ID: "rv-0000000000000001", Stage: review.StageRequest, Request: raw}
	doc, err := EditDoc(it, raw)
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
			if _, err := ApplyEdit(it, raw, []byte(edited)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want it to contain %q", err, tc.want)
			}
		})
	}
	edited := strings.Replace(string(doc), "What is this?", "What format is this?", 1)
	got, err := ApplyEdit(it, raw, []byte(edited))
	if err != nil || !strings.Contains(string(got), `"text":"What format is this?"`) || !strings.Contains(string(got), `"tools"`) {
		t.Errorf("text edit = %s, %v; want the new text and everything else kept", got, err)
	}
}

func TestLineDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	b := "1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n"
	want := "…\n  2\n  3\n- 4\n+ four\n  5\n  6\n…\n  8\n  9\n+ 10\n"
	if got := LineDiff(a, b); got != want {
		t.Errorf("LineDiff:\n%s\nwant:\n%s", got, want)
	}
	if got := LineDiff(a, a); got != "" {
		t.Errorf("LineDiff of equal texts = %q", got)
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

// TestApplyEditYAMLErrorInert: yaml's refusal quotes the start of the
// value it could not read, and lists each problem on a line of its own;
// the refusal is one line with that value escaped, never raw.
func TestApplyEditYAMLErrorInert(t *testing.T) {
	raw := json.RawMessage(`{"maxTokens":300,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)
	it := review.Item{ID: "rv-0000000000000001", Stage: review.StageRequest, Request: raw}
	doc, err := EditDoc(it, raw)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(doc), "maxTokens: 300", "maxTokens: \"\\e[2J\\n\"", 1)
	if edited == string(doc) {
		t.Fatalf("maxTokens is not in the document:\n%s", doc)
	}
	_, err = ApplyEdit(it, raw, []byte(edited))
	if err == nil {
		t.Fatal("a string maxTokens was accepted")
	}
	if strings.ContainsAny(err.Error(), "\x1b\n") {
		t.Fatalf("the refusal holds a raw escape or line break: %q", err)
	}
}
