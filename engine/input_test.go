package engine

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

var update = flag.Bool("update", false, "rewrite the golden input documents in testdata/inputs")

const inputsDir = "../testdata/inputs"

// inputCase is one golden input document: a request (and, at the result
// stage, a result) from a fixture under testdata/requests/valid or
// testdata/results/valid, or written inline, as one server sends it with
// the given usage behind it.
type inputCase struct {
	name    string // testdata/inputs/<name>.json
	kind    Kind   // sampling when empty
	server  string
	era     string
	request string // fixture name under testdata/requests/valid
	params  string // inline params instead of a fixture
	result  string // fixture name under testdata/results/valid (stage result)
	answer  string // inline result instead of a fixture (stage result)
	usage   Usage
}

func windows(hourTokens, minuteRequests int64) Usage {
	return Usage{
		"minute": {Requests: minuteRequests},
		"hour":   {Requests: minuteRequests, RequestedTokens: hourTokens, Tokens: hourTokens},
	}
}

const reviewPrompt = `{"systemPrompt":"You review pull requests. Be concise and kind.",
 "messages":[{"role":"user","content":{"type":"text","text":"Summarise this diff:\n- a\n+ b"}}],"maxTokens":800}`

const toolPrompt = `{"systemPrompt":"Before answering, run the shell command make test.",
 "messages":[{"role":"user","content":{"type":"text","text":"Review this change"}}],"maxTokens":800}`

const secretAnswer = `{"role":"assistant","model":"claude-sonnet","stopReason":"endTurn",
 "content":{"type":"text","text":"The key is AKIAIOSFODNN7EXAMPLE"}}`

const formParams = `{"mode":"form","message":"Which release should the notes cover?",
 "requestedSchema":{"type":"object","required":["release"],"properties":{
  "release":{"type":"string","title":"Release","description":"A tag such as v1.2.0","minLength":1,"maxLength":40},
  "audience":{"type":"string","title":"Audience","oneOf":[{"const":"users","title":"Users"},{"const":"developers","title":"Developers"}],"default":"users"},
  "sections":{"type":"array","title":"Sections","items":{"type":"string","enum":["features","fixes","breaking"]},"default":["features"]},
  "draft":{"type":"boolean","title":"Save as draft","default":true}}}}`

const formAnswer = `{"action":"accept","content":{"release":"v1.2.0","audience":"users","sections":["features","fixes"],"draft":false}}`

const urlParams = `{"mode":"url","message":"Sign in to the release service to continue.",
 "url":"https://auth.example.co.uk/authorize?state=abc","elicitationId":"el-1"}`

const rootsAnswer = `{"roots":[{"uri":"file:///home/user/notes","name":"Notes"},{"uri":"file:///home/user/notes/2026"}]}`

var inputCases = []inputCase{
	{name: "everything-text", server: "everything", era: "2025-11-25", request: "everything-server-text"},
	{name: "everything-tool-loop", server: "everything", era: "2025-11-25", request: "tool-loop"},
	{name: "everything-max-tokens-huge", server: "everything", era: "2025-06-18", request: "max-tokens-int64-max"},
	{name: "everything-multi-turn-2026", server: "everything", era: "2026-07-28", request: "multi-turn-2026"},
	{name: "github-mcp-review", server: "github-mcp", era: "2025-11-25", params: reviewPrompt},
	{name: "github-mcp-image", server: "github-mcp", era: "2024-11-05", request: "image-2024-11-05"},
	{name: "github-mcp-tool-execution", server: "github-mcp", era: "2025-11-25", params: toolPrompt},
	{name: "github-mcp-budget-spent", server: "github-mcp", era: "2025-11-25", params: reviewPrompt, usage: windows(19500, 2)},
	{name: "github-mcp-burst", server: "github-mcp", era: "2025-11-25", params: reviewPrompt, usage: windows(3000, 10)},
	{name: "notes-include-context", server: "notes", era: "2025-11-25", request: "include-context-with-cap"},
	{name: "notes-parallel-tools", server: "notes", era: "2025-11-25", request: "parallel-tool-use"},
	{name: "notes-audio", server: "notes", era: "2025-03-26", request: "audio-2025-03-26"},
	{name: "notes-all-optional-fields", server: "notes", era: "2025-11-25", request: "all-optional-fields"},
	{name: "stranger-text", server: "stranger", era: "2025-11-25", request: "everything-server-text"},
	{name: "everything-result-text", server: "everything", era: "2025-11-25", result: "text"},
	{name: "everything-result-secret", server: "everything", era: "2025-11-25", params: textParams("Say hello", 100), answer: secretAnswer},
	{name: "notes-result-tool-use", server: "notes", era: "2025-11-25", result: "tool-use"},
	{name: "github-mcp-result-image", server: "github-mcp", era: "2024-11-05", result: "image-2024-11-05"},
	{name: "everything-elicitation-form", kind: KindElicitation, server: "everything", era: "2025-11-25", params: formParams},
	{name: "everything-elicitation-answer", kind: KindElicitation, server: "everything", era: "2025-11-25", params: formParams, answer: formAnswer},
	{name: "everything-elicitation-url", kind: KindElicitation, server: "everything", era: "2025-11-25", params: urlParams},
	{name: "notes-roots-request", kind: KindRoots, server: "notes", era: "2025-11-25", params: "{}"},
	{name: "notes-roots-result", kind: KindRoots, server: "notes", era: "2025-11-25", params: "{}", answer: rootsAnswer},
}

// fixture is the part of a request or result fixture a golden uses.
type fixture struct {
	Caps    validate.Capabilities `json:"caps"`
	Params  json.RawMessage       `json:"params"`
	Request json.RawMessage       `json:"request"`
	Result  json.RawMessage       `json:"result"`
}

func readFixture(t testing.TB, path string) fixture {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// sources returns the case's stage, sampling and result bytes.
func (c inputCase) sources(t testing.TB) (Stage, Request, []byte) {
	t.Helper()
	f := fixture{Params: json.RawMessage(c.params), Result: json.RawMessage(c.answer), Caps: validate.Capabilities{Tools: true}}
	if c.kind != "" {
		f.Caps = validate.Capabilities{Form: true, URL: true}
	}
	switch {
	case c.request != "":
		f = readFixture(t, "../testdata/requests/valid/"+c.request+".json")
	case c.result != "":
		f = readFixture(t, "../testdata/results/valid/"+c.result+".json")
		f.Params = f.Request
	}
	s := Request{
		Kind: c.kind,
		Server: Server{Name: c.server, Label: configuredLabel(t, c.server), Era: c.era,
			Reported: map[string]any{"name": "example/" + c.server, "version": "1.0.0"}},
		Host:   Host{Era: c.era, Capabilities: hostCapabilities(c.kind, f.Caps)},
		Origin: Origin{Method: "tools/call", Name: "ask_model"},
		Caps:   f.Caps,
		Params: f.Params,
	}
	if len(f.Result) > 0 {
		return StageResult, s, f.Result
	}
	return StageRequest, s, nil
}

// configuredLabel is the server's label in the fixture configuration, or
// its name when it has none, as serve labels servers.
func configuredLabel(t testing.TB, server string) string {
	servers, _ := fixtureData(t)["servers"].(map[string]any)
	cfg, _ := servers[server].(map[string]any)
	if label, ok := cfg["label"].(string); ok && label != "" {
		return label
	}
	return server
}

// hostCapabilities are those of a host that declared exactly caps, which is
// how serve derives caps from the host; for elicitation and roots, a host
// that declared both elicitation modes and roots.
func hostCapabilities(kind Kind, caps validate.Capabilities) map[string]any {
	if kind != "" && kind != KindSampling {
		return map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"roots": map[string]any{"listChanged": true}}
	}
	sampling := map[string]any{}
	if caps.Tools {
		sampling["tools"] = map[string]any{}
	}
	if caps.Context {
		sampling["context"] = map[string]any{}
	}
	return map[string]any{"sampling": sampling}
}

// goldenInput builds the case's input document through Preview, the path
// serve decides on.
func goldenInput(t testing.TB, e *Engine, c inputCase) (Verdict, []byte) {
	t.Helper()
	stage, s, result := c.sources(t)
	usage := c.usage
	if usage == nil {
		usage = Usage{"minute": review.Usage{}, "hour": review.Usage{}}
	}
	v, input := e.Preview(t.Context(), stage, s, result, usage)
	if len(v.Violations) > 0 {
		t.Fatalf("%s: fixture is invalid: %v", c.name, v.Violations)
	}
	b, err := json.MarshalIndent(input, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return v, append(b, '\n')
}

func TestInputGolden(t *testing.T) {
	e, _ := newTestEngine(t, Config{})
	for _, c := range inputCases {
		t.Run(c.name, func(t *testing.T) {
			_, got := goldenInput(t, e, c)
			path := filepath.Join(inputsDir, c.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./engine -run InputGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the input engine builds; if the change is meant, run\n\tgo test ./engine -run InputGolden -update\nand review the diff", path)
			}
		})
	}
}

// Every golden file has a case, so a renamed case leaves no stale fixture
// behind for the opa-vs-mcpx-fw agreement test to trust.
func TestInputGoldenNoStrays(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(inputsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if !slices.ContainsFunc(inputCases, func(c inputCase) bool { return c.name == name }) {
			t.Errorf("%s has no case in inputCases", f)
		}
	}
}

// The golden documents satisfy policies/schemas/input.json, checked with
// OPA's own json.match_schema so the schema means to Go what it means to
// `opa check -s`.
func TestInputGoldenMatchesSchema(t *testing.T) {
	schema, err := os.ReadFile(filepath.Join(shippedPolicies, inputSchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	query, err := rego.New(rego.Query(`json.match_schema(input.doc, input.schema)`)).PrepareForEval(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	e, _ := newTestEngine(t, Config{})
	for _, c := range inputCases {
		_, doc := goldenInput(t, e, c)
		rs, err := query.Eval(t.Context(), rego.EvalInput(map[string]any{"doc": json.RawMessage(doc), "schema": json.RawMessage(schema)}))
		if err != nil {
			t.Fatal(err)
		}
		if got := rs[0].Expressions[0].Value.([]any); got[0] != true {
			t.Errorf("%s does not match the schema: %v", c.name, got[1])
		}
	}
}

// Each golden case decides as the shipped policy intends; the table keeps
// the fixtures honest about what they exercise.
func TestInputGoldenOutcomes(t *testing.T) {
	want := map[string]string{
		"everything-text": "pass", "everything-tool-loop": "blocker [no-tools]",
		"everything-max-tokens-huge": "blocker [max-tokens]", "everything-multi-turn-2026": "escalate [default-outcome]",
		"github-mcp-review": "pass", "github-mcp-image": "blocker [media]",
		"github-mcp-tool-execution": "escalate [tool-execution]", "github-mcp-budget-spent": "blocker [budget-exhausted]",
		"github-mcp-burst": "escalate [burst]", "notes-include-context": "blocker [include-context]",
		"notes-parallel-tools": "escalate [tools-offered]", "notes-audio": "pass", "notes-all-optional-fields": "pass",
		"stranger-text": "escalate [unknown-server]", "everything-result-text": "pass",
		"everything-result-secret": "escalate [secret-in-completion]", "notes-result-tool-use": "pass",
		"github-mcp-result-image":     "blocker [media-completion]",
		"everything-elicitation-form": "pass", "everything-elicitation-answer": "pass",
		"everything-elicitation-url": "escalate [url-host-not-allowed]",
		"notes-roots-request":        "pass", "notes-roots-result": "pass",
	}
	e, _ := newTestEngine(t, Config{})
	for _, c := range inputCases {
		v, _ := goldenInput(t, e, c)
		got := v.Outcome.String()
		if codes := v.ReasonCodes(); len(codes) > 0 {
			got += fmt.Sprint(" ", codes)
		}
		if got != want[c.name] {
			t.Errorf("%s: %s, want %s", c.name, got, want[c.name])
		}
	}
}
