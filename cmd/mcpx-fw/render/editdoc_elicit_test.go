package render

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

const urlRequest = `{"mode":"url","message":"Sign in to connect your calendar.","url":"https://auth.example.com/oauth/authorize?client_id=abc","elicitationId":"el-42"}`

// TestElicitEditDocGolden pins the edit document of a form and of a URL
// request; roots and a user's answer have none, and say so.
func TestElicitEditDocGolden(t *testing.T) {
	for name, req := range map[string]string{"elicit-form.yaml": rendertest.FormRequest, "elicit-url.yaml": urlRequest} {
		t.Run(name, func(t *testing.T) {
			it := rendertest.KindItem(t, "elicitation", req, "")
			doc, err := EditDoc(it, it.Request)
			if err != nil {
				t.Fatal(err)
			}
			rendertest.CheckInert(t, "the edit document", string(doc))
			checkGolden(t, filepath.Join("editdoc", name), string(doc))
		})
	}
	for _, it := range []review.Item{rendertest.KindItem(t, "roots", `{}`, ""), rendertest.KindItem(t, "roots", `{}`, `{"roots":[]}`),
		rendertest.KindItem(t, "elicitation", rendertest.FormRequest, rendertest.FormAnswer)} {
		if _, err := EditDoc(it, Editable(it)); err == nil || !strings.Contains(err.Error(), "cannot be edited: approve it as it is or reject it") {
			t.Errorf("%s at the %s stage: the edit document is %v, want a refusal", ItemKind(it), it.Stage, err)
		}
	}
}

// TestElicitEditRoundTrip: the unchanged document applies back to exactly
// the request, hostile text included, and an edit of the texts changes
// only them, keeping the fields in the order the upstream wrote them.
func TestElicitEditRoundTrip(t *testing.T) {
	h := func(s string) string { b, _ := json.Marshal(s + hostile); return string(b) }
	hostileForm := `{"message":` + h("m") + `,"requestedSchema":{"type":"object","properties":{"z":{"type":"string","title":` + h("t") +
		`},"a":{"type":"string","oneOf":[{"const":` + h("c") + `,"title":` + h("ct") + `}]},` + h("k") + `:{"type":"string","enum":["x"],"enumNames":[` + h("en") + `]}},"required":["z"]}}`
	for _, req := range []string{rendertest.FormRequest, urlRequest, hostileForm} {
		it := rendertest.KindItem(t, "elicitation", req, "")
		doc, err := EditDoc(it, it.Request)
		if err != nil {
			t.Fatal(err)
		}
		rendertest.CheckInert(t, "the edit document", string(doc))
		got, err := ApplyEdit(it, it.Request, doc)
		if err != nil {
			t.Fatalf("the unchanged document is refused: %v\n%s", err, doc)
		}
		if !sameJSON(t, it.Request, got) {
			t.Errorf("the unchanged document changes the request:\n%s\n%s", req, got)
		}
	}

	it := rendertest.KindItem(t, "elicitation", rendertest.FormRequest, "")
	doc, _ := EditDoc(it, it.Request)
	edited := strings.NewReplacer("Please tell us about yourself.", "Tell us a little.", `title: Full name`, `title: Your name`,
		"As on your passport", "Any name you like", "title: Green", "title: Verde", "title: Pro plan", "title: Paid plan",
		"title: Beta", "title: B").Replace(string(doc))
	got, err := ApplyEdit(it, it.Request, []byte(edited))
	if err != nil {
		t.Fatalf("a text edit is refused: %v\n%s", err, edited)
	}
	want := strings.NewReplacer("Please tell us about yourself.", "Tell us a little.", `"Full name"`, `"Your name"`,
		"As on your passport", "Any name you like", `"Green"`, `"Verde"`, `"Pro plan"`, `"Paid plan"`, `"Beta"`, `"B"`).Replace(rendertest.FormRequest)
	if !sameJSON(t, json.RawMessage(want), got) {
		t.Errorf("the edit gave\n%s\nwant\n%s", got, want)
	}
	var order struct {
		RequestedSchema struct {
			Properties json.RawMessage `json:"properties"`
		} `json:"requestedSchema"`
	}
	_ = json.Unmarshal(got, &order)
	if keys := strings.Join(objectKeys(order.RequestedSchema.Properties), ","); keys != "name,email,birthday,age,height,newsletter,size,color,plan,days,tags" {
		t.Errorf("the edit reordered the fields: %s", keys)
	}
}

// TestElicitEditShapeRefused: an edit that would change what the user is
// asked for (a field's type, constraint, required, default, choice value,
// name, the number of fields, a key the document has no place for, the
// URL) is refused in one line naming the field or key; the message and
// texts alone may change.
func TestElicitEditShapeRefused(t *testing.T) {
	form := rendertest.KindItem(t, "elicitation", rendertest.FormRequest, "")
	formDoc, _ := EditDoc(form, form.Request)
	url := rendertest.KindItem(t, "elicitation", urlRequest, "")
	urlDoc, _ := EditDoc(url, url.Request)
	cases := []struct {
		name, old, new, want string
		url                  bool
	}{
		{"constraint", `"maxLength":100`, `"maxLength":100000`, `field 1 ("name"): its shape changed (maxLength)`, false},
		{"type", `{"format":"email","type":"string"}`, `{"format":"email","type":"number"}`, `field 2 ("email"): its shape changed (type)`, false},
		{"required", `"type":"string"} required`, `"type":"string"} optional`, `field 1 ("name"): its shape changed (required/optional)`, false},
		{"default", `"default":30`, `"default":99`, `field 4 ("age"): its shape changed (default)`, false},
		{"enum value", `"enum":["s","m","l"]`, `"enum":["s","m","xl"]`, `field 7 ("size"): its shape changed (enum)`, false},
		{"choice value", "value: '\"g\"'", "value: '\"x\"'", `field 8 ("color"), choice 2: its value changed`, false},
		{"name", "name: birthday", "name: ssn", `field 3 ("birthday"): its name changed to "ssn"`, false},
		{"added key", "  - name: birthday\n", "  - name: birthday\n    type: password\n", `a field cannot hold "type"`, false},
		{"root key", "message: |", "requestedSchema: {}\nmessage: |", `the document cannot hold "requestedSchema"`, false},
		{"url", "auth.example.com", "evil.example", "the shape line changed", true},
		{"url field", "shape:", "fields: [{name: x, shape: y}]\nshape:", "a URL request has no fields", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it, doc := form, string(formDoc)
			if c.url {
				it, doc = url, string(urlDoc)
			}
			if !strings.Contains(doc, c.old) {
				t.Fatalf("the document lacks %q:\n%s", c.old, doc)
			}
			_, err := ApplyEdit(it, it.Request, []byte(strings.Replace(doc, c.old, c.new, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("the edit gives %v; want one line with %q", err, c.want)
			}
		})
	}
	// Removing a field.
	cut := regexp.MustCompile(`(?s)  - name: birthday\n.*?(  - name: age)`).ReplaceAllString(string(formDoc), "$1")
	if _, err := ApplyEdit(form, form.Request, []byte(cut)); err == nil || !strings.Contains(err.Error(), "the form has 11 fields and the edit 10") {
		t.Errorf("removing a field gives %v", err)
	}
}

// TestElicitEditYAMLErrorInert: yaml quotes the start of a value it could
// not read, and the document holds what the upstream wrote (a title, say,
// moved by the operator); the refusal shows it escaped, never raw.
func TestElicitEditYAMLErrorInert(t *testing.T) {
	raw := json.RawMessage(`{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`)
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	_, err := applyElicit(raw, obj, []byte("fields: \"\\e]8;;x\\e\\\\\"\n"))
	if err == nil {
		t.Fatal("a document whose fields is a string was accepted")
	}
	if strings.ContainsRune(err.Error(), 0x1b) {
		t.Fatalf("the refusal holds a raw escape: %q", err)
	}
}
