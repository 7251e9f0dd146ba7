package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	Form    bool `json:"form"`
	URL     bool `json:"url"`
}

type fixtureLimits struct {
	MaxBytes       int `json:"maxBytes"`
	MaxDepth       int `json:"maxDepth"`
	MaxMessages    int `json:"maxMessages"`
	MaxBlocks      int `json:"maxBlocks"`
	MaxTextBytes   int `json:"maxTextBytes"`
	MaxBase64Bytes int `json:"maxBase64Bytes"`
	MaxTools       int `json:"maxTools"`
	MaxFields      int `json:"maxFields"`
	MaxEnumValues  int `json:"maxEnumValues"`
	MaxLabelBytes  int `json:"maxLabelBytes"`
	MaxURLBytes    int `json:"maxUrlBytes"`
	MaxRoots       int `json:"maxRoots"`
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
			Caps:   Capabilities{Tools: f.Caps.Tools, Context: f.Caps.Context, Form: f.Caps.Form, URL: f.Caps.URL},
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
	if want, have := sortedSet(f.Want), ruleSet(got); !slices.Equal(want, have) {
		t.Errorf("%s (%s): rule ids %q, want %q\nviolations: %+v", f.name, f.About, have, want, got)
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
				if slices.ContainsFunc(rv, func(v Violation) bool { return v.Rule != string(ruleEraUnknown) }) {
					t.Fatalf("the request of a result fixture must be valid (bar an unsupported era): %+v", rv)
				}
				_, got := Result(f.result(), req, opt)
				checkWant(t, f, got)
			})
		}
	}
}

// allEras are the revisions "all" stands for in Rule.Eras.
var allEras = []Era{era20241105, era20250326, era20250618, era20251125, era20260728}

// erasOf reads Rule.Eras: "all", "unsupported" (any version the package
// does not know, kept as that word) or a comma-separated list of known
// revisions.
func erasOf(t testing.TB, r Rule) []Era {
	t.Helper()
	switch r.Eras {
	case erasAll:
		return allEras
	case erasUnknown:
		return []Era{erasUnknown}
	}
	list := strings.Split(r.Eras, ", ")
	for _, e := range list {
		if !knownEras[e] {
			t.Fatalf("rule %s: era %q in %q is not a known revision", r.ID, e, r.Eras)
		}
	}
	return list
}

// emissions runs every fixture in every era it names and returns each
// distinct (rule, era, stage) it emits, with one fixture that emits it. An
// era the package does not know is recorded as "unsupported".
func emissions(t *testing.T) map[[3]string]string {
	t.Helper()
	out := map[[3]string]string{}
	record := func(f fixture, opt Options, stage string, vs []Violation) {
		era := opt.Era
		if !knownEras[era] {
			era = erasUnknown
		}
		for _, v := range vs {
			key := [3]string{v.Rule, era, stage}
			if _, ok := out[key]; !ok {
				out[key] = f.name
			}
		}
	}
	for _, k := range fixtureKinds {
		for _, f := range loadFixtures(t, k.dir) {
			for _, opt := range f.options() {
				_, vs := k.check(f, opt)
				record(f, opt, k.stage, vs)
			}
		}
	}
	return out
}

// emittedRules returns the rule ids some fixture emits.
func emittedRules(t *testing.T) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for k := range emissions(t) {
		seen[k[0]] = true
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

// TestEveryRuleInEveryEra reads Rule.Eras and requires, for each (rule,
// era) pair, an invalid fixture that emits the rule when run in that era;
// and, the other way round, that no fixture emits a rule in a known era
// its Eras leave out. Under an unsupported version only era.unknown counts:
// the other checks then run as the latest revision.
func TestEveryRuleInEveryEra(t *testing.T) {
	em := emissions(t)
	byPair := map[[2]string]string{}
	for k, f := range em {
		if k[1] == erasUnknown && k[0] != string(ruleEraUnknown) {
			continue
		}
		byPair[[2]string{k[0], k[1]}] = f
	}
	pairs := 0
	for _, r := range Rules() {
		for _, era := range erasOf(t, r) {
			pairs++
			if _, ok := byPair[[2]string{r.ID, era}]; !ok {
				t.Errorf("rule %s applies in %s but no fixture emits it there", r.ID, era)
			}
		}
	}
	for pair, f := range byPair {
		r, ok := ruleIndex[pair[0]]
		if ok && !slices.Contains(erasOf(t, r), pair[1]) {
			t.Errorf("%s emits %s in %s, outside the rule's eras %q", f, pair[0], pair[1], r.Eras)
		}
	}
	t.Logf("%d rules, %d (rule, era) pairs, %d covered", len(Rules()), pairs, len(byPair))
}

// TestEveryRuleAtItsStages reads Rule.Stages, which decides the wire code
// in doc.go: a rule listed for a stage must be emitted by a fixture of
// that stage (requests/ for "request", results/ for "result"), and no
// fixture may emit it at a stage it does not list.
func TestEveryRuleAtItsStages(t *testing.T) {
	seen := map[[2]string]bool{}
	for k := range emissions(t) {
		seen[[2]string{k[0], k[2]}] = true
	}
	for _, r := range Rules() {
		stages := strings.Split(r.Stages, ", ")
		for _, st := range []string{stReq, stRes} {
			listed, emitted := slices.Contains(stages, st), seen[[2]string{r.ID, st}]
			switch {
			case listed && !emitted:
				t.Errorf("rule %s lists stage %s but no %s fixture emits it", r.ID, st, st)
			case !listed && emitted:
				t.Errorf("rule %s is emitted at stage %s, which its Stages %q leave out", r.ID, st, r.Stages)
			}
		}
	}
}

// TestFixtureCount is the acceptance floor of issue 3, and logs how the
// fixtures spread over the eras.
func TestFixtureCount(t *testing.T) {
	runs := map[string]int{}
	files := 0
	for _, kind := range []string{"requests", "results"} {
		for _, f := range loadFixtures(t, kind) {
			files++
			for _, opt := range f.options() {
				runs[fmt.Sprintf("%s %s", kind, opt.Era)]++
			}
		}
	}
	if files < 80 {
		t.Errorf("%d fixtures, want at least 80", files)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range runs {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		t.Logf("%-30s %d runs", k, runs[k])
	}
}
