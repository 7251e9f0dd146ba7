package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fixture is one file under testdata/requests or testdata/results. The
// checked bytes are kept raw (params, result), so duplicate keys and odd
// spellings reach the validator exactly as written; bytes that are not JSON
// at all are given as a string (paramsText, resultText).
type fixture struct {
	About      string          `json:"about"`
	Era        string          `json:"era"`
	Eras       []string        `json:"eras"`
	Caps       fixtureCaps     `json:"caps"`
	Limits     fixtureLimits   `json:"limits"`
	Want       []string        `json:"want"`
	Params     json.RawMessage `json:"params"`
	ParamsText *string         `json:"paramsText"`
	Request    json.RawMessage `json:"request"`
	Result     json.RawMessage `json:"result"`
	ResultText *string         `json:"resultText"`

	name  string // file path below testdata, for messages
	valid bool   // the file is in a valid/ folder
}

type fixtureCaps struct {
	Tools   bool `json:"tools"`
	Context bool `json:"context"`
}

type fixtureLimits struct {
	MaxBytes       int `json:"maxBytes"`
	MaxDepth       int `json:"maxDepth"`
	MaxMessages    int `json:"maxMessages"`
	MaxBlocks      int `json:"maxBlocks"`
	MaxTextBytes   int `json:"maxTextBytes"`
	MaxBase64Bytes int `json:"maxBase64Bytes"`
	MaxTools       int `json:"maxTools"`
}

// options returns one Options per era the fixture names.
func (f fixture) options() []Options {
	eras := f.Eras
	if len(eras) == 0 {
		eras = []string{f.Era}
	}
	var out []Options
	for _, e := range eras {
		out = append(out, Options{
			Era:    e,
			Caps:   Capabilities{Tools: f.Caps.Tools, Context: f.Caps.Context},
			Limits: Limits(f.Limits),
		})
	}
	return out
}

// params returns the exact request bytes of a request fixture.
func (f fixture) params() []byte {
	if f.ParamsText != nil {
		return []byte(*f.ParamsText)
	}
	return f.Params
}

// result returns the exact result bytes of a result fixture.
func (f fixture) result() []byte {
	if f.ResultText != nil {
		return []byte(*f.ResultText)
	}
	return f.Result
}

// loadFixtures reads every fixture under testdata/<kind>/{valid,invalid}.
func loadFixtures(t testing.TB, kind string) []fixture {
	t.Helper()
	var out []fixture
	for _, dir := range []string{"valid", "invalid"} {
		files, err := filepath.Glob(filepath.Join("..", "testdata", kind, dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			out = append(out, readFixture(t, name, dir == "valid"))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no fixtures under testdata/%s", kind)
	}
	return out
}

func readFixture(t testing.TB, name string, valid bool) fixture {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f fixture
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f.name, f.valid = strings.TrimPrefix(filepath.ToSlash(name), "../testdata/"), valid
	return f
}

// ruleSet returns the distinct rule ids of vs, sorted.
func ruleSet(vs []Violation) []string {
	var ids []string
	for _, v := range vs {
		ids = append(ids, v.Rule)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func sortedSet(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// checkWant compares emitted rule ids with the fixture's want, and that a
// valid fixture wants nothing and an invalid one something.
func checkWant(t *testing.T, f fixture, got []Violation) {
	t.Helper()
	if f.valid != (len(f.Want) == 0) {
		t.Fatalf("%s: fixtures under valid/ want no violations, under invalid/ at least one", f.name)
	}
	if diff := cmp.Diff(sortedSet(f.Want), ruleSet(got), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s (%s): rule ids (-want +got):\n%s\nviolations: %+v", f.name, f.About, diff, got)
	}
}

func TestRequestFixtures(t *testing.T) {
	fixtures := loadFixtures(t, "requests")
	if len(fixtures) < 40 {
		t.Errorf("%d request fixtures, want at least 40", len(fixtures))
	}
	for _, f := range fixtures {
		for _, opt := range f.options() {
			t.Run(f.name+"@"+opt.Era, func(t *testing.T) {
				doc, got := Request(f.params(), opt)
				checkWant(t, f, got)
				if doc == nil && len(got) == 0 {
					t.Error("nil document without a violation")
				}
			})
		}
	}
}

func TestResultFixtures(t *testing.T) {
	fixtures := loadFixtures(t, "results")
	if len(fixtures) < 12 {
		t.Errorf("%d result fixtures, want at least 12", len(fixtures))
	}
	for _, f := range fixtures {
		for _, opt := range f.options() {
			t.Run(f.name+"@"+opt.Era, func(t *testing.T) {
				req, rv := Request(f.Request, opt)
				if len(rv) > 0 {
					t.Fatalf("the request of a result fixture must be valid: %+v", rv)
				}
				_, got := Result(f.result(), req, opt)
				checkWant(t, f, got)
			})
		}
	}
}

// emittedRules runs every fixture and returns the rule ids emitted.
func emittedRules(t *testing.T) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range loadFixtures(t, "requests") {
		for _, opt := range f.options() {
			_, vs := Request(f.params(), opt)
			for _, v := range vs {
				seen[v.Rule] = true
			}
		}
	}
	for _, f := range loadFixtures(t, "results") {
		for _, opt := range f.options() {
			req, _ := Request(f.Request, opt)
			_, vs := Result(f.result(), req, opt)
			for _, v := range vs {
				seen[v.Rule] = true
			}
		}
	}
	return seen
}

func TestEmittedRulesAreListed(t *testing.T) {
	for id := range emittedRules(t) {
		if _, ok := ruleIndex[id]; !ok {
			t.Errorf("rule %q is emitted but not listed in Rules()", id)
		}
	}
}

func TestEveryRuleHasAFixture(t *testing.T) {
	seen := emittedRules(t)
	for _, r := range Rules() {
		if !seen[r.ID] {
			t.Errorf("rule %q is listed but no fixture emits it", r.ID)
		}
	}
}
