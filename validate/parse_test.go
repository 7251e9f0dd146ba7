package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const hi = `"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]`

var opt0618 = Options{Era: "2025-06-18"}

func TestNumbersStayExact(t *testing.T) {
	raw := `{` + hi + `,"maxTokens":100,"temperature":0.10000000000000000001}`
	doc, vs := Request([]byte(raw), opt0618)
	if len(vs) != 0 {
		t.Fatalf("violations: %+v", vs)
	}
	for key, want := range map[string]json.Number{"maxTokens": "100", "temperature": "0.10000000000000000001"} {
		if got := doc[key]; got != want {
			t.Errorf("%s = %#v, want %#v", key, got, want)
		}
	}
}

// TestLookalikeKeys guards the smuggling class where a lenient reader maps
// a near-miss name onto a real field: Go's encoding/json matches names
// case-insensitively, so "MAXTOKENS" would land in maxTokens there.
func TestLookalikeKeys(t *testing.T) {
	for _, key := range []string{"MAXTOKENS", "maxtokens", `maxTokens\u0000`, "maxTokens ", `max\u0054okens\u200b`} {
		raw := fmt.Sprintf(`{%s,"maxTokens":5,"%s":99999}`, hi, key)
		doc, vs := Request([]byte(raw), opt0618)
		if got := ruleSet(vs); !cmp.Equal(got, []string{"SMP-10.unknown-key"}) {
			t.Errorf("key %q: rules %v, want only the unknown key", key, got)
		}
		if doc["maxTokens"] != json.Number("5") {
			t.Errorf("key %q changed maxTokens to %v", key, doc["maxTokens"])
		}
	}
}

func TestDuplicateKeyKeepsLastAndReportsPath(t *testing.T) {
	raw := `{"messages":[{"role":"user","content":{"type":"text","text":"a","text":"b"}}],"maxTokens":5}`
	doc, vs := Request([]byte(raw), opt0618)
	want := []Violation{{Rule: "json.duplicate-key", Path: "/messages/0/content/text", Message: `key "text" appears more than once`}}
	if diff := cmp.Diff(want, vs); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	block := doc["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)
	if block["text"] != "b" {
		t.Errorf("kept %v, want the last value", block["text"])
	}
}

func TestNotAnObject(t *testing.T) {
	for _, raw := range []string{"", " ", "null", "[]", `"x"`, "1", "{", `{"a":}`, `{"a" 1}`, `{"a":1]`, "\xff"} {
		doc, vs := Request([]byte(raw), opt0618)
		if doc != nil {
			t.Errorf("%q: got a document %v", raw, doc)
		}
		if len(vs) == 0 || (vs[0].Rule != "json.syntax" && vs[0].Rule != "json.utf8") {
			t.Errorf("%q: violations %+v, want json.syntax", raw, vs)
		}
	}
}

func TestDepthBoundary(t *testing.T) {
	opt := Options{Era: "2025-06-18", Limits: Limits{MaxDepth: 6}}
	// root(1) metadata(2) and n nested objects below it.
	nested := func(n int) []byte {
		return []byte(`{` + hi + `,"maxTokens":5,"metadata":` + strings.Repeat(`{"n":`, n) + `{}` + strings.Repeat(`}`, n) + `}`)
	}
	if _, vs := Request(nested(4), opt); len(vs) != 0 {
		t.Errorf("depth 6: %+v", vs)
	}
	doc, vs := Request(nested(5), opt)
	if doc != nil || len(vs) != 1 || vs[0].Rule != "limits.depth" || vs[0].Path != "/metadata/n/n/n/n/n" {
		t.Errorf("depth 7: doc %v, violations %+v", doc, vs)
	}
}

// TestDocumentOrder checks that violations come in the order their
// locations appear in the input, whatever order the checks run in; a
// missing member sorts at the end of the object that lacks it.
func TestDocumentOrder(t *testing.T) {
	raw := `{"zzz":1,"messages":[{"content":{"type":"text","text":"x"}},{"role":"bot","content":{"type":"text"}}],"maxTokens":0,"aaa":2}`
	_, vs := Request([]byte(raw), opt0618)
	var got []string
	for _, v := range vs {
		got = append(got, v.Rule+" "+v.Path)
	}
	want := []string{
		"SMP-10.unknown-key /zzz",
		"SMP-02.role /messages/0/role",
		"SMP-02.role /messages/1/role",
		"SMP-05.block /messages/1/content/text",
		"SMP-03.max-tokens /maxTokens",
		"SMP-10.unknown-key /aaa",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestPointerEscaping(t *testing.T) {
	_, vs := Request([]byte(`{`+hi+`,"maxTokens":5,"a/b~c":1}`), opt0618)
	if len(vs) != 1 || vs[0].Path != "/a~1b~0c" {
		t.Errorf("violations %+v, want path /a~1b~0c", vs)
	}
}

func TestViolationCap(t *testing.T) {
	msg := `{"role":"x","content":{"type":"text","text":1}}`
	raw := `{"messages":[` + strings.TrimSuffix(strings.Repeat(msg+",", 900), ",") + `],"maxTokens":5}`
	_, vs := Request([]byte(raw), opt0618)
	if len(vs) != maxViolations {
		t.Errorf("%d violations, want the cap %d", len(vs), maxViolations)
	}
}

func TestLimitsResolved(t *testing.T) {
	if got := (Limits{}).resolved(); got != DefaultLimits() {
		t.Errorf("zero limits resolve to %+v, want the defaults", got)
	}
	got := Limits{MaxTools: 3, MaxDepth: -1}.resolved()
	want := DefaultLimits()
	want.MaxTools = 3
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestResultWithoutRequest(t *testing.T) {
	raw := `{"role":"assistant","model":"m","stopReason":"toolUse","content":{"type":"tool_use","id":"t","name":"x","input":{}}}`
	_, vs := Result([]byte(raw), nil, Options{Era: "2025-11-25"})
	if got := ruleSet(vs); !cmp.Equal(got, []string{"RES-03.tool-use"}) {
		t.Errorf("rules %v, want RES-03.tool-use", got)
	}
}

// TestDocumentMatchesStandardDecoder checks that, for valid input, the
// strict parser builds exactly the tree encoding/json builds, so policy
// and the host read the same values.
func TestDocumentMatchesStandardDecoder(t *testing.T) {
	for _, f := range loadFixtures(t, "requests") {
		if !f.valid {
			continue
		}
		opt := f.options()[0]
		doc, _ := Request(f.params(), opt)
		dec := json.NewDecoder(bytes.NewReader(f.params()))
		dec.UseNumber()
		var want map[string]any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if diff := cmp.Diff(Document(want), doc); diff != "" {
			t.Errorf("%s: document differs from encoding/json (-want +got):\n%s", f.name, diff)
		}
	}
}
