package validate

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// fixtureKind is one folder of fixtures and how to check them: the
// sampling requests and results, and the elicitation and roots ones
// beside them (testdata/requests/elicitation, testdata/requests/roots,
// each with a results/ folder).
type fixtureKind struct {
	dir   string // below testdata
	stage string // stReq or stRes
	// check validates the fixture's bytes in opt, a result against its
	// request as the request check returned it.
	check func(f fixture, opt Options) (Document, []Violation)
	// request checks a result fixture's request; nil for request kinds.
	request func(f fixture, opt Options) []Violation
	// raw returns the bytes check reads.
	raw func(f fixture) []byte
}

func paramsOf(f fixture) []byte { return f.params() }
func resultOf(f fixture) []byte { return f.result() }

// fixtureKinds are every folder of fixtures, in the order the tests run
// them.
var fixtureKinds = []fixtureKind{
	{"requests", stReq, func(f fixture, opt Options) (Document, []Violation) { return Request(f.params(), opt) }, nil, paramsOf},
	{"results", stRes, func(f fixture, opt Options) (Document, []Violation) {
		req, _ := Request(f.Request, opt)
		return Result(f.result(), req, opt)
	}, func(f fixture, opt Options) []Violation { _, vs := Request(f.Request, opt); return vs }, resultOf},
	{"requests/elicitation", stReq, func(f fixture, opt Options) (Document, []Violation) { return Elicitation(f.params(), opt) }, nil, paramsOf},
	{"requests/elicitation/results", stRes, func(f fixture, opt Options) (Document, []Violation) {
		req, _ := Elicitation(f.Request, opt)
		return ElicitationResult(f.result(), req, opt)
	}, func(f fixture, opt Options) []Violation { _, vs := Elicitation(f.Request, opt); return vs }, resultOf},
	{"requests/roots", stReq, func(f fixture, opt Options) (Document, []Violation) { return Roots(f.params(), opt) }, nil, paramsOf},
	{"requests/roots/results", stRes, func(f fixture, opt Options) (Document, []Violation) {
		req, _ := Roots(f.Request, opt)
		return RootsResult(f.result(), req, opt)
	}, func(f fixture, opt Options) []Violation { _, vs := Roots(f.Request, opt); return vs }, resultOf},
}

// TestElicitationAndRootsFixtures runs every elicitation and roots fixture
// in every era it names: each invalid one must emit exactly the rules it
// names, each valid one none; a result fixture's request must be valid
// (bar an unsupported era).
func TestElicitationAndRootsFixtures(t *testing.T) {
	for _, k := range fixtureKinds[2:] {
		fixtures := loadFixtures(t, k.dir)
		if len(fixtures) < 6 {
			t.Errorf("%s: %d fixtures, want at least 6", k.dir, len(fixtures))
		}
		for _, f := range fixtures {
			for _, opt := range f.options() {
				t.Run(f.name+"@"+opt.Era, func(t *testing.T) {
					if k.request != nil {
						if rv := k.request(f, opt); slices.ContainsFunc(rv, func(v Violation) bool { return v.Rule != string(ruleEraUnknown) }) {
							t.Fatalf("the request of a result fixture must be valid (bar an unsupported era): %+v", rv)
						}
					}
					doc, got := k.check(f, opt)
					checkWant(t, f, got)
					if doc == nil && len(got) == 0 {
						t.Error("nil document without a violation")
					}
				})
			}
		}
	}
}

// TestAnswerNeverQuotesTheValue: what the user typed goes to the upstream
// or nowhere; a violation (logged, shown to an operator, put in an error)
// names the field and the rule, never the value. Every way a value can
// fail is tried with a marker in it.
func TestAnswerNeverQuotesTheValue(t *testing.T) {
	const mark = "S3CRET-hunter2"
	req, vs := Elicitation([]byte(`{"message":"m","requestedSchema":{"type":"object","properties":{
		"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},
		"d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"},
		"short":{"type":"string","maxLength":3},"long":{"type":"string","minLength":40},
		"pick":{"type":"string","enum":["a"]},"titled":{"type":"string","oneOf":[{"const":"a","title":"A"}]},
		"multi":{"type":"array","items":{"type":"string","enum":["a"]}},
		"n":{"type":"integer"},"b":{"type":"boolean"}}}}`), Options{Era: era20251125})
	if len(vs) > 0 {
		t.Fatalf("request: %+v", vs)
	}
	content := map[string]any{}
	for _, k := range []string{"e", "u", "d", "t", "short", "long", "pick", "titled", "n", "b"} {
		content[k] = mark
	}
	content["multi"] = []any{mark, mark}
	raw, _ := json.Marshal(map[string]any{"action": "accept", "content": content})
	_, got := ElicitationResult(raw, req, Options{Era: era20251125, Limits: Limits{MaxTextBytes: 4}})
	_, got2 := ElicitationResult(raw, req, Options{Era: era20251125})
	got = append(got, got2...)
	if len(got) < 11 {
		t.Fatalf("want a violation per field, got %+v", got)
	}
	for _, v := range got {
		if strings.Contains(v.Message, "hunter") || strings.Contains(v.Path, "hunter") {
			t.Errorf("%s at %s quotes the user's value: %q", v.Rule, v.Path, v.Message)
		}
	}
}
