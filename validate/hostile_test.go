package validate

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Tests for what the hostile corpus (testdata/requests/hostile, driven
// through the real firewall by cmd/mcpx-fw) found in this package.

var opt1125 = Options{Era: "2025-11-25", Caps: Capabilities{Tools: true}}

// TestLongKeysStayCheap: a member name of hundreds of kilobytes over
// hundreds of thousands of values (or duplicate members) must cost about
// one read of the input. Paths once spelled the whole name for every
// duplicate and, to order violations, for every value under it: minutes of
// work and gigabytes of paths for one request.
func TestLongKeysStayCheap(t *testing.T) {
	key := strings.Repeat("k", 256<<10)
	for name, tail := range map[string]string{
		"duplicates": `{` + strings.Repeat(`"a":0,`, 100000) + `"a":0}`,
		"values":     `[` + strings.Repeat(`0,`, 300000) + `0]`,
	} {
		raw := `{` + hi + `,"maxTokens":5,"x":1,"y":2,"metadata":{"` + key + `":` + tail + `}}`
		start := time.Now()
		_, vs := Request([]byte(raw), opt0618)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s: %d bytes took %v", name, len(raw), took)
		}
		if len(vs) < 2 {
			t.Errorf("%s: %d violations, want the unknown keys at least", name, len(vs))
		}
		for _, v := range vs {
			if len(v.Path) > 200 {
				t.Fatalf("%s: a path of %d bytes: %.80s…", name, len(v.Path), v.Path)
			}
		}
	}
}

// TestLongKeyInPath: a long member name is cut in a path, on a character
// boundary, and the cut path still orders its violation.
func TestLongKeyInPath(t *testing.T) {
	key := strings.Repeat("é", 100) // 200 bytes
	raw := `{` + hi + `,"maxTokens":5,"` + key + `":1,"zz":2}`
	_, vs := Request([]byte(raw), opt0618)
	want := []string{"/" + strings.Repeat("é", 32) + "…", "/zz"}
	var got []string
	for _, v := range vs {
		got = append(got, v.Path)
	}
	if !slices.Equal(got, want) {
		t.Errorf("paths %q, want %q", got, want)
	}
}

// TestOrderMatchesFullRecording: the recording parse looks up only values
// on the violations' paths and skips the rest unread; it must put every
// fixture's violations where a recording of every value would.
func TestOrderMatchesFullRecording(t *testing.T) {
	check := func(t *testing.T, raw []byte, doc Document, vs []Violation, lim Limits) {
		if doc == nil || len(vs) < 2 {
			return
		}
		sparse := newPathTrie(vs)
		sparse.record(raw, lim)
		all := slices.Clone(vs)
		walkPaths("", doc, func(path string) { all = append(all, Violation{Path: path}) })
		full := newPathTrie(all)
		full.record(raw, lim)
		for _, v := range vs {
			if s, f := sparse.position(v.Path), full.position(v.Path); s != f {
				t.Errorf("%s: position %d, a full recording says %d", v.Path, s, f)
			}
		}
	}
	// Skipped values that look like their ends: brackets, quotes and
	// escapes inside strings, numbers and literals next to brackets.
	for i, raw := range []string{
		`{"a":1,"metadata":{"s":"]}\"\\","n":[-1.5e+3,true,null,{"x":"}"}],"t":{}},` + hi + `,"maxTokens":5,"b":2}`,
		`{"x":[[],[{}],"[",{"\"":"{"}] ,` + hi + ` , "maxTokens" : 5 , "y" : [ 1 , 2 ] }`,
		`{"messages":[{"role":"user","content":{"type":"text","text":"]]}}"},"k":{"v":[0,{"w":"\\\""}]}},{"role":"x"}],"maxTokens":0}`,
	} {
		doc, vs := Request([]byte(raw), opt1125)
		t.Run("synthetic-"+strconv.Itoa(i), func(t *testing.T) {
			if len(vs) < 2 {
				t.Fatalf("want several violations, got %+v", vs)
			}
			check(t, []byte(raw), doc, vs, opt1125.Limits.resolved())
		})
	}
	for _, k := range fixtureKinds {
		for _, f := range loadFixtures(t, k.dir) {
			for _, opt := range f.options() {
				doc, vs := k.check(f, opt)
				t.Run(f.name+"@"+opt.Era, func(t *testing.T) { check(t, k.raw(f), doc, vs, opt.Limits.resolved()) })
			}
		}
	}
}

// walkPaths calls fn with the path of every value in v, v included.
func walkPaths(path string, v any, fn func(string)) {
	fn(path)
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			walkPaths(child(path, k), e, fn)
		}
	case []any:
		for i, e := range x {
			walkPaths(index(path, i), e, fn)
		}
	}
}

// TestHugeNumbers: a number no float64 holds is refused wherever it sits;
// by its member's rule where the schema wants a number, as json.syntax in
// the values passed on as they are, where every MCP SDK would fail to
// decode it.
func TestHugeNumbers(t *testing.T) {
	use := func(input string) string {
		return `{"messages":[{"role":"user","content":{"type":"text","text":"go"}},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"t","input":` + input + `}]},` +
			`{"role":"user","content":[{"type":"tool_result","toolUseId":"u1","content":[]}]}],` +
			`"maxTokens":5,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
	}
	for _, tc := range []struct {
		raw  string
		want []string
		path string
	}{
		{`{` + hi + `,"maxTokens":5,"metadata":{"n":1e400}}`, []string{"json.syntax"}, "/metadata/n"},
		{`{` + hi + `,"maxTokens":5,"metadata":{"n":[-1E+309]}}`, []string{"json.syntax"}, "/metadata/n/0"},
		{`{` + hi + `,"maxTokens":5,"metadata":{"n":1` + strings.Repeat("0", 400) + `}}`, []string{"json.syntax"}, "/metadata/n"},
		{use(`{"n":1e400}`), []string{"json.syntax"}, "/messages/1/content/0/input/n"},
		{`{` + hi + `,"maxTokens":5,"temperature":1e400}`, []string{"SMP-11.temperature"}, "/temperature"},
		{`{` + hi + `,"maxTokens":1e400}`, []string{"SMP-03.max-tokens"}, "/maxTokens"},
		{`{` + hi + `,"maxTokens":5,"extra":{"n":1e400}}`, []string{"SMP-10.unknown-key"}, "/extra"},
		{`{` + hi + `,"maxTokens":5,"metadata":{"tiny":1e-400,"big":1e308,"long":12345678901234567890123}}`, nil, ""},
	} {
		_, vs := Request([]byte(tc.raw), opt1125)
		if got := ruleSet(vs); !slices.Equal(got, tc.want) {
			t.Errorf("%.120s: rules %v, want %v", tc.raw, got, tc.want)
		} else if len(vs) > 0 && vs[0].Path != tc.path {
			t.Errorf("%.120s: path %q, want %q", tc.raw, vs[0].Path, tc.path)
		}
	}
	req, _ := Request([]byte(use(`{}`)), opt1125)
	res := `{"role":"assistant","model":"m","stopReason":"toolUse","content":[{"type":"tool_use","id":"u2","name":"t","input":{"n":1e999}}]}`
	if _, vs := Result([]byte(res), req, opt1125); !slices.Equal(ruleSet(vs), []string{"json.syntax"}) {
		t.Errorf("result with 1e999 in a tool input: %+v", vs)
	}
}

// TestShapesAnSDKDecodes: members the schema types, which an MCP SDK
// decodes into typed fields and would refuse the whole request over, are
// checked: tool icons and annotations, a resource link's size and icons.
func TestShapesAnSDKDecodes(t *testing.T) {
	tool := func(extra string) string {
		return `{` + hi + `,"maxTokens":5,"tools":[{"name":"t","inputSchema":{"type":"object"}` + extra + `}]}`
	}
	link := func(extra string) string {
		return `{"messages":[{"role":"user","content":{"type":"text","text":"go"}},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"t","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","toolUseId":"u1","content":[{"type":"resource_link","uri":"file:///x","name":"x"` + extra + `}]}]}],` +
			`"maxTokens":5,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
	}
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{tool(`,"icons":[{"src":"https://x/i.png","mimeType":"image/png","sizes":["48x48"],"theme":"dark"}]`), nil},
		{tool(`,"icons":["https://x/i.png"]`), []string{"SMP-07.tools"}},
		{tool(`,"icons":[{"mimeType":"image/png"}]`), []string{"SMP-07.tools"}},
		{tool(`,"icons":[{"src":"x","sizes":[48]}]`), []string{"SMP-07.tools"}},
		{tool(`,"annotations":{"title":"T","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`), nil},
		{tool(`,"annotations":{"readOnlyHint":"yes"}`), []string{"SMP-07.tools"}},
		{tool(`,"annotations":{"title":7}`), []string{"SMP-07.tools"}},
		{link(`,"size":12`), nil},
		{link(`,"size":0`), nil},
		{link(`,"size":1.5`), []string{"SMP-05.resource"}},
		{link(`,"size":-1`), []string{"SMP-05.resource"}},
		{link(`,"size":1e3`), []string{"SMP-05.resource"}},
		{link(`,"size":9223372036854775808`), []string{"SMP-05.resource"}},
		{link(`,"icons":[{"src":"x"}]`), nil},
		{link(`,"icons":[1]`), []string{"SMP-05.resource"}},
	} {
		if _, vs := Request([]byte(tc.raw), opt1125); !slices.Equal(ruleSet(vs), tc.want) {
			t.Errorf("%.200s: rules %v, want %v", tc.raw, ruleSet(vs), tc.want)
		}
	}
}

// TestMimeTypeIsASCII: a MIME type is ASCII; a direction override could
// make one show as another type in a reviewer's terminal.
func TestMimeTypeIsASCII(t *testing.T) {
	for mime, ok := range map[string]bool{
		`image/png`: true, `image/svg+xml; charset=utf-8`: true,
		`image/png\u202egpj`: false, `image/pngé`: false, `image/\u0000png`: false, `image/png\u007f`: false,
	} {
		raw := `{"messages":[{"role":"user","content":{"type":"image","mimeType":"` + mime + `","data":"AAAA"}}],"maxTokens":5}`
		_, vs := Request([]byte(raw), opt1125)
		if got := len(vs) == 0; got != ok {
			t.Errorf("mimeType %s: accepted %v, want %v (%+v)", mime, got, ok, vs)
		}
	}
}
