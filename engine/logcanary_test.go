package engine

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// canaries hands out distinct marker words and remembers them, so a test
// can plant one in every place an upstream or a host writes and then look
// for each in the logs. They are upper-case letters and digits, which no
// digest (lower-case hex) and nothing mcpx-fw writes of its own contains.
type canaries struct{ all []string }

func (c *canaries) word() string {
	w := fmt.Sprintf("CNRY%04dQXZW", len(c.all)+1)
	c.all = append(c.all, w)
	return w
}

// text is a prompt text: a canary, a zero-width space (so the text has a
// folded form, facts.folded_texts) and another canary spelt in Unicode tag
// characters (so it hides text, facts.hidden_text).
func (c *canaries) text() string { return c.word() + "\u200b" + tagged(c.word()) }

// tagged spells ASCII s in Unicode tag characters, which render as nothing.
func tagged(s string) string {
	var tags strings.Builder
	for _, r := range s {
		tags.WriteRune(0xE0000 + r)
	}
	return tags.String()
}

// base64 is image, audio or blob data: a canary, encoded.
func (c *canaries) base64() string { return base64.StdEncoding.EncodeToString([]byte(c.word())) }

// object is a free-form object (_meta, metadata, a tool's input) with a
// canary for a member name and one for its value.
func (c *canaries) object() map[string]any { return map[string]any{c.word(): c.word()} }

// needles are what betrays a canary: every piece of it at least 8 long,
// spelt plainly or in tag characters, and every such piece of its base64
// form, at each of the three offsets base64 can start it at.
func (c *canaries) needles() map[string]string {
	out := map[string]string{}
	add := func(w, s string) {
		for i := 0; i+8 <= len(s); i++ {
			out[s[i:i+8]] = w
			out[tagged(s[i:i+8])] = w
		}
	}
	for _, w := range c.all {
		add(w, w)
		add(w, strings.ToLower(w)) // a URL's host is lower-cased
		for pad := range 3 {
			enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00", pad) + w))
			add(w, enc[4:len(enc)-4]) // the part no neighbouring byte changes
		}
	}
	return out
}

// canaryAnnotations are a block's annotations with the one free text in
// them.
func (c *canaries) annotations() map[string]any {
	return map[string]any{"audience": []any{"user", "assistant"}, "priority": 0.5, "lastModified": c.word()}
}

// maximalRequest is a valid sampling request in era with a canary in every
// string an upstream writes: the system prompt, every block type (nested
// resources and resource links included), tool_use ids, names and inputs,
// tools with their schemas, annotations and icons, stop sequences,
// metadata, model hints and every _meta. tool names the one tool.
func maximalRequest(c *canaries, era, tool string) map[string]any {
	include := "thisServer" // denied by the shipped policy, at both stages
	if era >= "2026-07-28" {
		include = "none" // tools offered: held for review, completions checked
	}
	useID := c.word()
	media := func(kind string) map[string]any {
		return map[string]any{"type": kind, "data": c.base64(), "mimeType": kind + "/" + c.word(),
			"annotations": c.annotations(), "_meta": c.object()}
	}
	nested := []any{
		map[string]any{"type": "text", "text": c.text(), "annotations": c.annotations(), "_meta": c.object()},
		media("image"), media("audio"),
		map[string]any{"type": "resource_link", "uri": c.word(), "name": c.word(), "title": c.word(),
			"description": c.word(), "mimeType": c.word(), "size": 12, "icons": []any{map[string]any{"src": c.word()}},
			"annotations": c.annotations(), "_meta": c.object()},
		map[string]any{"type": "resource", "annotations": c.annotations(), "_meta": c.object(),
			"resource": map[string]any{"uri": c.word(), "mimeType": c.word(), "text": c.text(), "_meta": c.object()}},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": c.word(), "mimeType": c.word(), "blob": c.base64()}},
	}
	var structured any
	if era < "2026-07-28" {
		structured = c.object()
	} else {
		structured = []any{c.word(), c.object()} // any JSON from 2026-07-28
	}
	req := map[string]any{
		"systemPrompt":   c.text(),
		"maxTokens":      100,
		"includeContext": include,
		"temperature":    0.5,
		"stopSequences":  []any{c.word(), c.word()},
		"metadata":       map[string]any{c.word(): c.object()},
		"modelPreferences": map[string]any{"hints": []any{map[string]any{"name": c.word()}},
			"costPriority": 0.1, "speedPriority": 0.2, "intelligencePriority": 0.3},
		"tools": []any{map[string]any{
			"name": tool, "title": c.word(), "description": c.text(),
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				c.word(): map[string]any{"type": "string", "description": c.word()}}},
			"outputSchema": map[string]any{"type": "object", "properties": map[string]any{c.word(): c.object()}},
			"annotations":  map[string]any{"title": c.word(), "readOnlyHint": true, c.word(): c.word()},
			"icons":        []any{map[string]any{"src": c.word(), "mimeType": c.word(), "sizes": []any{c.word()}, "theme": c.word()}},
			"execution":    c.object(),
			"_meta":        c.object(),
		}},
		"toolChoice": map[string]any{"mode": "auto"},
		"messages": []any{
			map[string]any{"role": "user", "_meta": c.object(), "content": []any{
				map[string]any{"type": "text", "text": c.text(), "annotations": c.annotations(), "_meta": c.object()},
				media("image"), media("audio"),
			}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": useID, "name": tool,
				"input": map[string]any{c.word(): c.text(), c.word(): []any{c.word()}}, "_meta": c.object()}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "toolUseId": useID,
				"content": nested, "structuredContent": structured, "isError": false, "_meta": c.object()}}},
			map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": c.text()}},
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": c.text()}},
		},
	}
	if era < "2026-07-28" {
		req["task"] = map[string]any{"ttl": 1000}
		req["_meta"] = c.object()
	}
	return req
}

// maximalResults are two valid completions for maximalRequest: one with
// every block type a completion may hold (tool_use calling tool), one
// whose stop reason is the host's own word.
func maximalResults(c *canaries, tool string) []map[string]any {
	return []map[string]any{
		{"role": "assistant", "model": c.word(), "stopReason": "toolUse", "_meta": c.object(), "content": []any{
			map[string]any{"type": "text", "text": c.text(), "annotations": c.annotations(), "_meta": c.object()},
			map[string]any{"type": "image", "data": c.base64(), "mimeType": "image/" + c.word()},
			map[string]any{"type": "audio", "data": c.base64(), "mimeType": "audio/" + c.word()},
			map[string]any{"type": "tool_use", "id": c.word(), "name": tool, "input": map[string]any{c.word(): c.text()}, "_meta": c.object()},
		}},
		{"role": "assistant", "model": c.word(), "stopReason": c.word(), "content": map[string]any{"type": "text", "text": c.text()}},
	}
}

// schemaGen builds documents from policies/schemas/input.json, the input
// document's definition: every property present, every string a canary
// (enumerated ones too: an upstream may send any word, and validation
// refuses it only after the input is built), every object that allows
// members of its own given one named by a canary, every array one
// element. A field added to the schema is planted with a canary without
// this test changing.
type schemaGen struct {
	c       *canaries
	schema  map[string]any
	depth   int
	visited []string
}

func newSchemaGen(t *testing.T, c *canaries) *schemaGen {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(shippedPolicies, inputSchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	g := &schemaGen{c: c}
	if err := json.Unmarshal(b, &g.schema); err != nil {
		t.Fatal(err)
	}
	return g
}

// definition returns a value for a definition of the schema.
func (g *schemaGen) definition(name string) any {
	return g.value(g.schema["definitions"].(map[string]any)[name].(map[string]any))
}

// property returns a value for the schema of a path of properties from the
// root, e.g. "server", "reported".
func (g *schemaGen) property(path ...string) map[string]any {
	node := g.schema
	for _, p := range path {
		node = node["properties"].(map[string]any)[p].(map[string]any)
	}
	return node
}

func (g *schemaGen) value(node map[string]any) any {
	if ref, ok := node["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/definitions/")
		if g.depth > 2 { // a block nests blocks; two levels show every member
			return g.c.object()
		}
		g.depth++
		defer func() { g.depth-- }()
		g.visited = append(g.visited, name)
		return g.definition(name)
	}
	if variants, ok := node["anyOf"].([]any); ok {
		// The last variant that is not null: for content, the array of
		// blocks, which also holds a block.
		for i := len(variants) - 1; i >= 0; i-- {
			if v := variants[i].(map[string]any); v["type"] != "null" {
				return g.value(v)
			}
		}
	}
	switch node["type"] {
	case "string":
		return g.c.word()
	case "integer":
		return 1
	case "number":
		return 0.5
	case "boolean":
		return true
	case "array":
		items, _ := node["items"].(map[string]any)
		return []any{g.value(items)}
	}
	obj := map[string]any{}
	props, _ := node["properties"].(map[string]any)
	for name, p := range props {
		obj[name] = g.value(p.(map[string]any))
	}
	if node["additionalProperties"] != false {
		obj[g.c.word()] = g.c.word()
	}
	return obj
}

// logRun is one engine deciding with its decision log in a buffer and its
// service log observed.
type logRun struct {
	e    *Engine
	dlog bytes.Buffer
	slog *observer.ObservedLogs
}

func newLogRun(t *testing.T, policyDir string, content bool) *logRun {
	t.Helper()
	r := &logRun{}
	core, logs := observer.New(zapcore.DebugLevel)
	r.slog = logs
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg := Config{
		Policy:         PolicyConfig{Dir: policyDir, Data: fixtureData(t)},
		ReviewTimeout:  time.Minute,
		DecisionLog:    &r.dlog,
		IncludeContent: content,
		LogSalt:        bytes.Repeat([]byte{9}, 32),
	}
	if r.e, err = New(t.Context(), cfg, store, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	return r
}

// events decodes the decision log.
func (r *logRun) events(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range bytes.Lines(r.dlog.Bytes()) {
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var ev map[string]any
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("decision log line is not JSON: %v: %.200s", err, line)
		}
		out = append(out, ev)
	}
	return out
}

// canaryCase is one sampling exchange: a request and the completions
// checked against it, from one upstream.
type canaryCase struct {
	name    string
	policy  string // policy dir; the shipped policies when empty
	s       Request
	results [][]byte
	// invalid says the request breaks validation, and invalidResults how
	// many of the last results do; every other document must validate, or
	// the test would not show the log of the policy's decisions on it.
	invalid        bool
	invalidResults int
}

// canaryCases plants canaries everywhere an upstream or a host writes:
// maximal valid requests of two eras with maximal completions, documents
// generated from the input schema (invalid, so they are logged as sent),
// and a policy whose reasons and errors quote them.
func canaryCases(t *testing.T, c *canaries) []canaryCase {
	t.Helper()
	gen := newSchemaGen(t, c)
	sampling := func(era string, params any) Request {
		b, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		reported := gen.value(gen.property("server", "reported")).(map[string]any)
		serverInfo := map[string]any{"name": c.word(), "version": c.word(), "title": c.word(), "websiteUrl": c.word(),
			"icons": []any{map[string]any{"src": c.word()}}}
		for k, v := range serverInfo {
			reported[k] = v
		}
		return Request{
			Server: Server{Name: "notes", Label: "Notes", Era: era, Reported: reported},
			Host:   Host{Era: era, Capabilities: hostCapabilities(KindSampling, validateCaps)},
			Origin: Origin{Method: "tools/call", Name: c.word(), Round: 1},
			Caps:   validateCaps,
			Params: b,
		}
	}
	encode := func(docs ...any) [][]byte {
		var out [][]byte
		for _, d := range docs {
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	var cases []canaryCase
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		tool := c.word()
		rs := maximalResults(c, tool)
		cases = append(cases, canaryCase{name: "maximal " + era, s: sampling(era, maximalRequest(c, era, tool)),
			results: encode(rs[0], rs[1], gen.definition("sampling_result")), invalidResults: 1})
	}
	// Invalid from its era on, so no completion is ever checked against it.
	// A member the params do not have puts a canary in a violation's path.
	params := gen.definition("sampling_request").(map[string]any)
	params[c.word()] = c.word()
	generated := sampling(c.word(), params)
	generated.Host.Era = c.word()
	generated.Origin.Method = c.word()
	cases = append(cases, canaryCase{name: "schema-generated", s: generated, invalid: true})
	cases = append(cases, elicitationCanaryCases(t, c, gen, sampling)...)
	tool := c.word()
	rs := maximalResults(c, tool)
	cases = append(cases, canaryCase{name: "quoting policy", policy: "../testdata/policies/quoting",
		s: sampling("2025-11-25", maximalRequest(c, "2025-11-25", tool)), results: encode(rs[0], rs[1])})
	return cases
}

// maximalForm is a valid form with a canary in every string an upstream
// writes: the message, field names (one spelt with a zero-width space, one
// hiding tag characters), titles, descriptions, enum values and titles in
// every SEP-1330 form, defaults and the required list; choices are the
// values its enum, single- and multi-select fields may be answered with.
func maximalForm(c *canaries) (form map[string]any, names []string, choices []any) {
	option := func() map[string]any { return map[string]any{"const": c.word(), "title": c.text()} }
	names = []string{c.word() + "\u200b" + c.word(), c.word(), c.word() + tagged(c.word()), c.word(), c.word(), c.word(), c.word()}
	single, multi, values := []any{option(), option()}, []any{option(), option()}, []any{c.word(), c.word()}
	props := map[string]any{
		names[0]: map[string]any{"type": "string", "title": c.text(), "description": c.text(), "minLength": 1, "maxLength": 50,
			"format": "email", "default": c.word() + "@" + strings.ToLower(c.word()) + ".example"},
		names[1]: map[string]any{"type": "integer", "title": c.word(), "minimum": 1, "maximum": 9, "default": 3},
		names[2]: map[string]any{"type": "string", "enum": values, "enumNames": []any{c.text(), c.text()}},
		names[3]: map[string]any{"type": "string", "oneOf": single, "default": single[1].(map[string]any)["const"]},
		names[4]: map[string]any{"type": "array", "title": c.word(), "minItems": 1, "maxItems": 2,
			"items": map[string]any{"anyOf": multi}, "default": []any{multi[0].(map[string]any)["const"]}},
		names[5]: map[string]any{"type": "boolean", "description": c.text(), "default": true},
		names[6]: map[string]any{"type": "string", "description": c.word()},
	}
	return map[string]any{
		"mode":    "form",
		"message": c.text(),
		"requestedSchema": map[string]any{"type": "object", "properties": props, "required": []any{names[0], names[3]},
			"title": c.text(), "description": c.text(), "additionalProperties": false},
		"task": map[string]any{"ttl": 1000},
	}, names, []any{values[0], single[0].(map[string]any)["const"], multi[1].(map[string]any)["const"]}
}

// elicitationCanaryCases are a maximal form with every answer the host may
// give, a URL request with canaries in its host (in Unicode and mixing
// scripts), path, query and user information, a roots list, and
// documents generated from the schema's elicitation and roots
// definitions.
func elicitationCanaryCases(t *testing.T, c *canaries, gen *schemaGen, request func(string, any) Request) []canaryCase {
	t.Helper()
	kinded := func(k Kind, params any) Request {
		s := request("2025-11-25", params)
		s.Kind, s.Caps = k, validate.Capabilities{Form: true, URL: true}
		return s
	}
	encode := func(docs ...any) [][]byte {
		var out [][]byte
		for _, d := range docs {
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	form, names, choices := maximalForm(c)
	answer := map[string]any{"action": "accept", "_meta": c.object(), "content": map[string]any{
		names[0]: c.word() + "@" + strings.ToLower(c.word()) + ".example", names[1]: 4, names[2]: choices[0], names[3]: choices[1],
		names[4]: []any{choices[2]}, names[5]: false, names[6]: c.text(),
	}}
	urlRequest := map[string]any{"mode": "url", "message": c.text(), "elicitationId": c.word(),
		"url": "https://" + c.word() + ":" + c.word() + "@" + c.word() + "\u0430." + c.word() + ".example:8443/" + c.word() + "?q=" + c.word() + "#" + c.word()}
	plainURL := map[string]any{"mode": "url", "message": c.word(), "elicitationId": c.word(),
		"url": "https://" + c.word() + ".example.com/" + c.word()}
	roots := map[string]any{"_meta": c.object(), "roots": []any{
		map[string]any{"uri": "file:///" + c.word(), "name": c.text(), "_meta": c.object()},
		map[string]any{"uri": "file:///" + c.word() + "/" + c.word()},
	}}
	generated := func(k Kind, def string) Request {
		params := gen.definition(def).(map[string]any)
		params[c.word()] = c.word()
		return kinded(k, params)
	}
	return []canaryCase{
		{name: "maximal form", s: kinded(KindElicitation, form), results: encode(answer,
			map[string]any{"action": "decline"}, map[string]any{"action": "cancel"}, gen.definition("elicitation_result")), invalidResults: 1},
		{name: "url", s: kinded(KindElicitation, urlRequest), results: encode(map[string]any{"action": "accept"})},
		{name: "plain url", s: kinded(KindElicitation, plainURL)},
		{name: "roots", s: kinded(KindRoots, map[string]any{}), results: encode(roots, gen.definition("roots_result")), invalidResults: 1},
		{name: "schema-generated elicitation", s: generated(KindElicitation, "elicitation_request"), invalid: true},
		{name: "schema-generated roots", s: generated(KindRoots, "roots_request"), invalid: true},
	}
}

// run decides every case, request then completions, and returns the
// outcomes in order.
func (r *logRun) run(t *testing.T, c canaryCase) []string {
	t.Helper()
	var outcomes []string
	note := func(v Verdict, invalid bool) {
		outcomes = append(outcomes, fmt.Sprint(v.Stage, " ", v.Outcome, " ", v.ReasonCodes()))
		if !invalid && len(v.Violations) > 0 {
			t.Errorf("%s: %s: %v; the document should validate", c.name, v.Stage, v.Violations)
		}
	}
	note(r.e.Decide(t.Context(), c.s), c.invalid)
	for i, res := range c.results {
		note(r.e.Check(t.Context(), c.s, res), c.invalid || i >= len(c.results)-c.invalidResults)
	}
	return outcomes
}

// leak is where a canary showed.
type leak struct{ path, canary string }

// findLeaks walks every member name and every string of v.
func findLeaks(v any, path string, needles map[string]string, out *[]leak) {
	check := func(s, at string) {
		seen := map[string]bool{}
		for n, w := range needles {
			if !seen[w] && strings.Contains(s, n) {
				seen[w] = true
				*out = append(*out, leak{at, w})
			}
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			check(k, path+"/"+k+" (name)")
			findLeaks(val, path+"/"+k, needles, out)
		}
	case []any:
		for i, val := range t {
			findLeaks(val, fmt.Sprint(path, "/", i), needles, out)
		}
	case string:
		check(t, path)
	}
}

// serviceLogLeaks checks every service-log line: message and fields.
func serviceLogLeaks(logs *observer.ObservedLogs, needles map[string]string) []leak {
	var out []leak
	for i, entry := range logs.All() {
		fields := map[string]any{"msg": entry.Message}
		for k, v := range entry.ContextMap() {
			fields[k] = fmt.Sprint(v)
		}
		findLeaks(fields, fmt.Sprint("service log ", i), needles, &out)
	}
	return out
}

// validateCaps lets requests use tools and context, so the maximal request
// is valid.
var validateCaps = validate.Capabilities{Tools: true, Context: true}

// With include_content off, no canary an upstream or a host wrote, nor
// any piece of one, nor its base64, reaches any member name or string of
// the decision log or any service-log line; the policy still decides on
// the words themselves. With it on, every canary is in the decision log,
// which proves each was planted where the log would show it.
func TestDecisionLogMasksEverythingTheUpstreamWrote(t *testing.T) {
	c := &canaries{}
	cases := canaryCases(t, c)
	needles := c.needles()
	outcomes := map[bool][]string{}
	runs := map[bool][]*logRun{}
	for _, content := range []bool{false, true} {
		byPolicy := map[string]*logRun{}
		for _, cc := range cases {
			dir := cmp.Or(cc.policy, shippedPolicies)
			if byPolicy[dir] == nil {
				byPolicy[dir] = newLogRun(t, dir, content)
				runs[content] = append(runs[content], byPolicy[dir])
			}
			outcomes[content] = append(outcomes[content], byPolicy[dir].run(t, cc)...)
		}
	}
	if !slices.Equal(outcomes[false], outcomes[true]) {
		t.Errorf("masking changed decisions:\nmasked  %v\ncontent %v", outcomes[false], outcomes[true])
	}

	var leaks []leak
	for _, r := range runs[false] {
		for _, ev := range r.events(t) {
			findLeaks(ev, "", needles, &leaks)
		}
	}
	for _, r := range append(runs[false], runs[true]...) {
		leaks = append(leaks, serviceLogLeaks(r.slog, needles)...)
	}
	for _, l := range leaks {
		t.Errorf("%s shows canary %s", l.path, l.canary)
	}

	shown := map[string]bool{}
	var contentEvents []map[string]any
	for _, r := range runs[true] {
		contentEvents = append(contentEvents, r.events(t)...)
	}
	var found []leak
	for _, ev := range contentEvents {
		findLeaks(ev, "", needles, &found)
	}
	for _, l := range found {
		shown[l.canary] = true
	}
	for _, w := range c.all {
		if !shown[w] {
			t.Errorf("canary %s never reached the decision log with content on: the test plants it nowhere the log shows", w)
		}
	}
	checkFactsCovered(t, contentEvents, needles)
}

// checkFactsCovered: every fact of every kind the schema types as free
// text (a string without an enum, a list of them, or an object holding
// one, such as an elicitation's fields and url) held a canary in some
// event of that kind, so the masked log was tested on each.
func checkFactsCovered(t *testing.T, events []map[string]any, needles map[string]string) {
	t.Helper()
	g := newSchemaGen(t, &canaries{})
	defs := g.schema["definitions"].(map[string]any)
	for _, kind := range []Kind{KindSampling, KindElicitation, KindRoots} {
		facts := defs[string(kind)+"_facts"].(map[string]any)["properties"].(map[string]any)
		for name, p := range facts {
			if !freeText(defs, p.(map[string]any)) {
				continue
			}
			var found []leak
			for _, ev := range events {
				if in := ev["input"].(map[string]any); in["kind"] == string(kind) {
					findLeaks(in["facts"].(map[string]any)[name], name, needles, &found)
				}
			}
			if len(found) == 0 {
				t.Errorf("%s facts.%s held no canary in any event: the test does not exercise it", kind, name)
			}
		}
	}
}

// freeText reports whether a schema node can hold text someone else wrote.
func freeText(defs map[string]any, node map[string]any) bool {
	if ref, ok := node["$ref"].(string); ok {
		return freeText(defs, defs[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any))
	}
	if variants, ok := node["anyOf"].([]any); ok {
		return slices.ContainsFunc(variants, func(v any) bool { return freeText(defs, v.(map[string]any)) })
	}
	switch node["type"] {
	case "string":
		return node["enum"] == nil
	case "array":
		return freeText(defs, node["items"].(map[string]any))
	case "object":
		for _, p := range node["properties"].(map[string]any) {
			if freeText(defs, p.(map[string]any)) {
				return true
			}
		}
	}
	return false
}

// Masked, the log still shows what kind of elicitation was decided and
// the URL's marks (scheme, port, userinfo, punycode, mixed script) and the
// form's shape (types, formats, counts), while the host and every text
// are digests.
func TestDecisionLogKeepsElicitationShape(t *testing.T) {
	r := newLogRun(t, shippedPolicies, false)
	caps := validate.Capabilities{Form: true, URL: true}
	url := Request{Kind: KindElicitation, Server: Server{Name: "notes"}, Caps: caps,
		Params: []byte(`{"mode":"url","message":"Sign in","elicitationId":"e1","url":"https://xn--pple-43d.example:8443/a"}`)}
	form := Request{Kind: KindElicitation, Server: Server{Name: "notes"}, Caps: caps,
		Params: []byte(`{"mode":"form","message":"Hi","requestedSchema":{"type":"object","properties":{"when":{"type":"string","format":"date"}}}}`)}
	r.e.Decide(t.Context(), url)
	r.e.Decide(t.Context(), form)
	events := r.events(t)
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
	facts := events[0]["input"].(map[string]any)["facts"].(map[string]any)
	u := facts["url"].(map[string]any)
	if events[0]["input"].(map[string]any)["kind"] != "elicitation" || facts["mode"] != "url" || u["scheme"] != "https" ||
		u["punycode"] != true || u["mixed_script"] != true || u["userinfo"] != false || fmt.Sprint(u["port"]) != "8443" {
		t.Errorf("url facts not kept: %v", facts)
	}
	for _, k := range []string{"host", "unicode_host", "registrable_domain"} {
		if s, _ := u[k].(string); !strings.HasPrefix(s, "hmac-sha256:") {
			t.Errorf("url.%s = %v, want a digest", k, u[k])
		}
	}
	field := events[1]["input"].(map[string]any)["facts"].(map[string]any)["fields"].([]any)[0].(map[string]any)
	if field["type"] != "string" || field["format"] != "date" || field["required"] != false || !strings.HasPrefix(field["name"].(string), "hmac-sha256:") {
		t.Errorf("field facts: %v", field)
	}
}
