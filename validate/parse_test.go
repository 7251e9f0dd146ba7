package validate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
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
		if got := ruleSet(vs); !slices.Equal(got, []string{"SMP-10.unknown-key"}) {
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
	if !slices.Equal(want, vs) {
		t.Errorf("violations %+v, want %+v", vs, want)
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
	if !slices.Equal(want, got) {
		t.Errorf("order:\n got %q\nwant %q", got, want)
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
	if got := ruleSet(vs); !slices.Equal(got, []string{"RES-03.tool-use"}) {
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
		if !reflect.DeepEqual(Document(want), doc) {
			t.Errorf("%s: document differs from encoding/json:\n got %#v\nwant %#v", f.name, doc, want)
		}
	}
}

// TestParserMatchesEncodingJSON holds the strict parser to encoding/json on
// the corners of the grammar: escapes, surrogates, invalid bytes, number
// spellings, literals, whitespace and trailing data. FuzzRequest checks
// the same on generated input.
func TestParserMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"a":"\ud83d\ude00"}`, `{"a":"\ud83d"}`, `{"a":"\ud83dx"}`, `{"a":"\ude00\ud83d"}`,
		`{"a":"\ud83d\u0041"}`, `{"a":"\ud83d\ud83d\ude00"}`, `{"a":"\u00e9\n\t\/\b\f\r\"\\"}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{"a":"é"}`, "{\"a\":\"\xff\xfe\"}",
		"{\"a\":\"\xed\xa0\x80\"}", "{\"a\xff\":1}", `{"a":"\u0000"}`, "{\"a\":\"\x01\"}",
		"{\"a\":\"\x7f\"}", `{"a\u0000":1}`, `{"a":1,"a":2}`, `{"a":-0}`, `{"a":1e400}`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":1E+2}`, `{"a":-1.5e-3}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":true,"b":false,"c":null}`, `{"a":[1,]}`, `{"a":[,1]}`,
		`{,}`, `{"a" : [ 1 , 2 ] }`, "{\"a\":1}  \n", `{"a":1} x`, `{"a":1}{}`, "\t{}\r\n",
		`{"a":{"b":[true,false,null,{}]}}`, `{"a"}`, `{"a":}`, `{"a":1`, `{"a":"x`, `{"a":"x\`,
		`{"a":[`, `{"a":[1`, `{1:2}`, `{"a":1,}`, `{"a":'x'}`, `{"a":+1}`, `{"a":0x1}`,
		`{"a":Infinity}`, `{"a":NaN}`, `{"a":"` + "\u2028" + `"}`, `[]`, `"x"`, `1`, ``,
	}
	for _, in := range inputs {
		t.Run(in, func(t *testing.T) {
			doc, vs := Request([]byte(in), opt0618)
			checkAgainstStdlib(t, []byte(in), doc, vs)
		})
	}
}

// base64Reference is what base64Problem must agree with: the strict
// standard decoder, minus the line breaks it would skip.
func base64Reference(s string) bool {
	if strings.ContainsAny(s, "\r\n") {
		return false
	}
	_, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil
}

// TestBase64MatchesStrictDecoder compares base64Problem with the strict
// decoder on every string of up to six bytes over an alphabet that holds
// digits with and without low bits set, padding, an illegal byte and a
// line break.
func TestBase64MatchesStrictDecoder(t *testing.T) {
	const alphabet = "ABQw+/=-\n"
	var walk func(prefix []byte)
	checked := 0
	walk = func(prefix []byte) {
		s := string(prefix)
		checked++
		if got, want := base64Problem(s) == "", base64Reference(s); got != want {
			t.Fatalf("%q: base64Problem accepts %v (%q), strict decoder %v", s, got, base64Problem(s), want)
		}
		if len(prefix) == 6 {
			return
		}
		for i := range len(alphabet) {
			walk(append(prefix, alphabet[i]))
		}
	}
	walk(nil)
	for _, s := range []string{"iVBORw0KGgo=", "UklGRg==", "UklGRh==", "UklGRg=", "iVBORw0KGgp=", strings.Repeat("QUJD", 1000)} {
		if got, want := base64Problem(s) == "", base64Reference(s); got != want {
			t.Errorf("%q: base64Problem accepts %v, strict decoder %v", s, got, want)
		}
	}
	t.Logf("%d strings checked", checked)
}
