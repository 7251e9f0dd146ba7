package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fuzzEras are the eras a fuzz input picks from by index; the last one is
// unknown on purpose.
var fuzzEras = []Era{era20241105, era20250326, era20250618, era20251125, era20260728, "1999-01-01"}

// smallLimits make every limit reachable: the default limits are in
// megabytes, these sit inside the fixtures, so seeds fall on both sides of
// each (TestSmallLimitsReachable).
var smallLimits = Limits{
	MaxBytes:       2048,
	MaxDepth:       6,
	MaxMessages:    3,
	MaxBlocks:      2,
	MaxTextBytes:   24,
	MaxBase64Bytes: 8,
	MaxTools:       2,
	MaxFields:      3,
	MaxEnumValues:  3,
	MaxLabelBytes:  16,
	MaxURLBytes:    40,
	MaxRoots:       2,
}

// fuzzOptions builds Options from fuzz arguments; small selects
// smallLimits instead of the defaults.
func fuzzOptions(era uint8, tools, context, small bool) Options {
	opt := Options{Era: fuzzEras[int(era)%len(fuzzEras)], Caps: Capabilities{Tools: tools, Context: context}}
	if small {
		opt.Limits = smallLimits
	}
	return opt
}

func eraIndex(era string) uint8 {
	for i, e := range fuzzEras {
		if e == era {
			return uint8(i)
		}
	}
	return uint8(len(fuzzEras) - 1)
}

// FuzzRequest checks, for any bytes, era, capabilities and both sets of
// limits, that Request never panics, that a nil document comes with a
// violation and every violation is well formed, that the strict parser
// agrees with encoding/json on what is JSON and what it means (and the
// base64 check with the strict decoder, on the raw bytes), and that an
// accepted request
//   - breaks no limit (bytes, depth, messages, blocks, text, base64, tools),
//   - re-encodes (json.Marshal of the Document) to bytes that are accepted
//     too and parse to an equal Document.
//
// It is seeded with every fixture under testdata/requests in every era it
// names, plus the requests of testdata/results and the stored requests of
// testdata/requests/hostile, each with default and with small limits.
func FuzzRequest(f *testing.F) {
	for _, kind := range []string{"requests", "results"} {
		for _, fx := range loadFixtures(f, kind) {
			raw := fx.params()
			if kind == "results" {
				raw = fx.Request
			}
			for _, opt := range fx.options() {
				for _, small := range []bool{false, true} {
					f.Add(raw, eraIndex(opt.Era), opt.Caps.Tools, opt.Caps.Context, small)
				}
			}
		}
	}
	for _, h := range hostileSeeds(f) {
		for _, era := range h.eras {
			for _, small := range []bool{false, true} {
				f.Add(h.params, eraIndex(era), h.caps.Tools, h.caps.Context, small)
			}
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, era uint8, tools, context, small bool) {
		opt := fuzzOptions(era, tools, context, small)
		doc, vs := Request(raw, opt)
		checkViolations(t, doc, vs)
		checkAgainstStdlib(t, raw, doc, vs)
		if got, want := base64Problem(string(raw)) == "", base64Reference(string(raw)); got != want {
			t.Fatalf("%q: base64Problem accepts %v, the strict decoder %v", raw, got, want)
		}
		if doc == nil || len(vs) > 0 {
			return
		}
		lim := opt.Limits.resolved()
		checkLimits(t, raw, doc, lim, true)
		again, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("re-encoding an accepted request: %v", err)
		}
		doc2, vs2 := Request(again, reencodedOptions(opt, again))
		if len(vs2) > 0 {
			t.Fatalf("accepted request %q re-encodes to %q with violations %+v", raw, again, vs2)
		}
		if !reflect.DeepEqual(doc, doc2) {
			t.Fatalf("accepted request %q re-encodes to %q, which parses differently:\n%#v\n%#v", raw, again, doc, doc2)
		}
	})
}

// hostileSeed is a request of testdata/requests/hostile small enough to
// be stored whole (one without a generator), for the fuzz corpus.
type hostileSeed struct {
	params []byte
	eras   []Era
	caps   fixtureCaps
}

// hostileSeeds reads the stored requests of testdata/requests/hostile (see
// its README; cmd/mcpx-fw drives them through the real firewall).
func hostileSeeds(t testing.TB) []hostileSeed {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "requests", "hostile", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no hostile requests: %v", err)
	}
	var out []hostileSeed
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Era        string          `json:"era"`
			Eras       []string        `json:"eras"`
			Caps       fixtureCaps     `json:"caps"`
			Params     json.RawMessage `json:"params"`
			ParamsText *string         `json:"paramsText"`
			Generate   json.RawMessage `json:"generate"`
		}
		if err := json.Unmarshal(data, &h); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Generate != nil {
			continue
		}
		seed := hostileSeed{params: h.Params, eras: h.Eras, caps: h.Caps}
		if h.ParamsText != nil {
			seed.params = []byte(*h.ParamsText)
		}
		if len(seed.eras) == 0 {
			seed.eras = []Era{h.Era}
		}
		out = append(out, seed)
	}
	return out
}

// FuzzResult checks the same properties for results, judged against a
// request that is itself fuzzed (valid or not: Result must cope with any
// Document, nil included). It is seeded with every fixture under
// testdata/results in every era it names, with both sets of limits.
func FuzzResult(f *testing.F) {
	for _, fx := range loadFixtures(f, "results") {
		for _, opt := range fx.options() {
			for _, small := range []bool{false, true} {
				f.Add(fx.result(), []byte(fx.Request), eraIndex(opt.Era), opt.Caps.Tools, small)
			}
		}
	}
	f.Fuzz(func(t *testing.T, raw, request []byte, era uint8, tools, small bool) {
		opt := fuzzOptions(era, tools, false, small)
		req, _ := Request(request, opt)
		doc, vs := Result(raw, req, opt)
		checkViolations(t, doc, vs)
		checkAgainstStdlib(t, raw, doc, vs)
		if doc == nil || len(vs) > 0 {
			return
		}
		checkLimits(t, raw, doc, opt.Limits.resolved(), false)
		again, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("re-encoding an accepted result: %v", err)
		}
		doc2, vs2 := Result(again, req, reencodedOptions(opt, again))
		if len(vs2) > 0 {
			t.Fatalf("accepted result %q re-encodes to %q with violations %+v", raw, again, vs2)
		}
		if !reflect.DeepEqual(doc, doc2) {
			t.Fatalf("accepted result %q re-encodes to %q, which parses differently:\n%#v\n%#v", raw, again, doc, doc2)
		}
	})
}

// reencodedOptions are the options the re-encoding is checked with. They
// are opt, except that MaxBytes grows to the re-encoding's length: Marshal
// escapes <, > and & as \u003c and U+2028/2029 as \u2028, so the same
// document can take more bytes than its original spelling, and the byte
// cap applies to bytes received, not to a document. Every other limit
// counts decoded values and must hold unchanged.
func reencodedOptions(opt Options, again []byte) Options {
	lim := opt.Limits.resolved()
	lim.MaxBytes = max(lim.MaxBytes, len(again))
	opt.Limits = lim
	return opt
}

func checkViolations(t *testing.T, doc Document, vs []Violation) {
	t.Helper()
	if doc == nil && len(vs) == 0 {
		t.Fatal("nil document without a violation")
	}
	if len(vs) > maxViolations {
		t.Fatalf("%d violations, more than the cap %d", len(vs), maxViolations)
	}
	for _, v := range vs {
		if !listed(ruleID(v.Rule)) {
			t.Fatalf("unlisted rule %q", v.Rule)
		}
		if v.Path != "" && !strings.HasPrefix(v.Path, "/") {
			t.Fatalf("path %q is not a JSON Pointer", v.Path)
		}
		if v.Message == "" {
			t.Fatalf("rule %s at %s has no message", v.Rule, v.Path)
		}
	}
}

// checkAgainstStdlib compares the strict parser with encoding/json: a
// document the parser returns is what encoding/json decodes (numbers as
// json.Number), with trailing data reported exactly when json.Valid
// fails; and input refused without a size or depth limit is not a valid
// JSON object.
func checkAgainstStdlib(t *testing.T, raw []byte, doc Document, vs []Violation) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var std any
	stdErr := dec.Decode(&std)
	valid := json.Valid(raw)
	if doc == nil {
		limited := slices.ContainsFunc(vs, func(v Violation) bool {
			return v.Rule == string(ruleLimitBytes) || v.Rule == string(ruleLimitDepth)
		})
		if _, isObj := std.(map[string]any); !limited && valid && isObj {
			t.Fatalf("%q is a valid JSON object, but the parser refused it: %+v", raw, vs)
		}
		return
	}
	if stdErr != nil {
		t.Fatalf("the parser read %q as an object, encoding/json refuses it: %v", raw, stdErr)
	}
	if !reflect.DeepEqual(std, any(map[string]any(doc))) {
		t.Fatalf("%q: the parser and encoding/json read different values:\n%#v\n%#v", raw, doc, std)
	}
	trailing := slices.ContainsFunc(vs, func(v Violation) bool {
		return v.Rule == string(ruleJSONSyntax) && v.Message == "trailing data after the object"
	})
	if trailing == valid {
		t.Fatalf("%q: trailing data reported %v, but json.Valid says %v", raw, trailing, valid)
	}
}

// checkLimits fails when an accepted document breaks a limit. It walks the
// document independently of the checker: request params when isRequest,
// else a CreateMessageResult.
func checkLimits(t *testing.T, raw []byte, doc Document, lim Limits, isRequest bool) {
	t.Helper()
	if len(raw) > lim.MaxBytes {
		t.Fatalf("accepted %d bytes, limit %d", len(raw), lim.MaxBytes)
	}
	if d := depthOf(doc); d > lim.MaxDepth {
		t.Fatalf("accepted depth %d, limit %d", d, lim.MaxDepth)
	}
	lc := limitChecker{t: t, lim: lim}
	if !isRequest {
		lc.content("/content", doc["content"])
		return
	}
	msgs := doc["messages"].([]any)
	if len(msgs) == 0 || len(msgs) > lim.MaxMessages {
		t.Fatalf("accepted %d messages, limit %d", len(msgs), lim.MaxMessages)
	}
	for i, m := range msgs {
		lc.content(index("/messages", i)+"/content", m.(map[string]any)["content"])
	}
	if s, ok := doc["systemPrompt"].(string); ok {
		lc.text("/systemPrompt", s)
	}
	if tools, ok := doc["tools"].([]any); ok && len(tools) > lim.MaxTools {
		t.Fatalf("accepted %d tools, limit %d", len(tools), lim.MaxTools)
	}
}

// limitChecker walks content blocks for checkLimits.
type limitChecker struct {
	t   *testing.T
	lim Limits
}

// content checks one content value: a block or an array of blocks.
func (lc limitChecker) content(path string, v any) {
	list, isArr := v.([]any)
	if !isArr {
		lc.block(path, v.(map[string]any))
		return
	}
	if len(list) > lc.lim.MaxBlocks {
		lc.t.Fatalf("%s: accepted %d blocks, limit %d", path, len(list), lc.lim.MaxBlocks)
	}
	for i, b := range list {
		lc.block(index(path, i), b.(map[string]any))
	}
}

// block checks the sizes inside one block, and the blocks nested in a
// tool_result.
func (lc limitChecker) block(path string, b map[string]any) {
	switch b["type"] {
	case "text":
		lc.text(path+"/text", b["text"].(string))
	case "image", "audio":
		lc.base64(path+"/data", b["data"].(string))
	case "tool_result":
		inner := b["content"].([]any)
		if len(inner) > lc.lim.MaxBlocks {
			lc.t.Fatalf("%s/content: accepted %d blocks, limit %d", path, len(inner), lc.lim.MaxBlocks)
		}
		for i, nb := range inner {
			lc.block(index(path+"/content", i), nb.(map[string]any))
		}
	case "resource":
		r := b["resource"].(map[string]any)
		if s, ok := r["text"].(string); ok {
			lc.text(path+"/resource/text", s)
		}
		if s, ok := r["blob"].(string); ok {
			lc.base64(path+"/resource/blob", s)
		}
	}
}

func (lc limitChecker) text(path, s string) {
	if len(s) > lc.lim.MaxTextBytes {
		lc.t.Fatalf("%s: accepted %d bytes of text, limit %d", path, len(s), lc.lim.MaxTextBytes)
	}
}

func (lc limitChecker) base64(path, s string) {
	if len(s) > lc.lim.MaxBase64Bytes {
		lc.t.Fatalf("%s: accepted %d bytes of base64, limit %d", path, len(s), lc.lim.MaxBase64Bytes)
	}
}

// depthOf is the nesting depth of a parsed value, the root container
// counting 1 and a scalar 0, as Limits.MaxDepth counts it.
func depthOf(v any) int {
	deepest := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			deepest = max(deepest, depthOf(e))
		}
	case []any:
		for _, e := range x {
			deepest = max(deepest, depthOf(e))
		}
	default:
		return 0
	}
	return deepest + 1
}

// TestSmallLimitsReachable makes sure the fuzz variant with smallLimits
// can hit every limit: the seed corpus alone, run with them, already
// breaks each one, and still has accepted inputs for the re-encoding
// property.
func TestSmallLimitsReachable(t *testing.T) {
	hit := map[string]bool{}
	accepted := 0
	for _, k := range fixtureKinds {
		for _, fx := range loadFixtures(t, k.dir) {
			for _, opt := range fx.options() {
				opt.Limits = smallLimits
				_, vs := k.check(fx, opt)
				for _, v := range vs {
					hit[v.Rule] = true
				}
				if len(vs) == 0 {
					accepted++
				}
			}
		}
	}
	if accepted < 20 {
		t.Errorf("only %d seeds are accepted under smallLimits", accepted)
	}
	t.Logf("%d seed runs accepted under smallLimits", accepted)
	for _, r := range Rules() {
		if strings.HasPrefix(r.ID, "limits.") && !hit[r.ID] {
			t.Errorf("no seed breaks %s under smallLimits", r.ID)
		}
	}
}
