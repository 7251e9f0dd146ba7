package engine

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
)

var updateCapabilities = flag.Bool("update-capabilities", false, "rewrite policies/capabilities.json from this OPA version")

const shippedPolicies = "../policies"

// shippedConfig is the server configuration the shipped-policy tests run
// under, with Go-typed numbers as the configuration loader produces them.
var shippedConfig = map[string]any{
	"default": "review",
	"servers": map[string]any{
		"everything": map[string]any{"label": "Everything reference server", "max_tokens": 4096},
		"notes":      map[string]any{"label": "Notes", "max_tokens": 2048},
	},
}

// samplePolicyInput is a plain request from the everything server in the shape
// engine/input.go builds, decoded from JSON so values are JSON-shaped.
const samplePolicyInput = `{
 "version": "mcpxfw/v1", "stage": "request",
 "server": {"name": "everything", "label": "Everything reference server", "protocol": "2025-11-25",
            "reported": {"name": "mcp-servers/everything", "version": "2.0.0"}},
 "host": {"protocol": "2025-11-25", "capabilities": {"sampling": {}}},
 "origin": {"method": "tools/call", "name": "test_sampling", "round": 0},
 "request": {"messages": [{"role": "user", "content": {"type": "text", "text": "Hello there!"}}], "maxTokens": 100},
 "result": null,
 "facts": {"message_count": 1, "text_bytes": 12, "image_bytes": 0, "audio_bytes": 0, "estimated_tokens": 3,
           "texts": ["Hello there!"], "tool_names": [], "tool_result_count": 0, "include_context": "none",
           "max_tokens": 100, "has_tools": false, "block_types": ["text"]},
 "usage": {}, "approval": null, "violations": []}`

// policyInput returns samplePolicyInput changed by edits, each a JSON object merged
// one level deep ("facts", "server", ...) or replacing a top-level key.
func policyInput(t *testing.T, edits ...string) map[string]any {
	t.Helper()
	in := decodePolicyJSON(t, samplePolicyInput)
	for _, e := range edits {
		for k, v := range decodePolicyJSON(t, e) {
			sub, isObj := v.(map[string]any)
			old, wasObj := in[k].(map[string]any)
			if !isObj || !wasObj || k == "result" || k == "approval" {
				in[k] = v
				continue
			}
			for sk, sv := range sub {
				old[sk] = sv
			}
		}
	}
	return in
}

func decodePolicyJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("test JSON: %v", err)
	}
	return m
}

func loadTestPolicy(t *testing.T, cfg PolicyConfig) *Policy {
	t.Helper()
	p, err := LoadPolicy(t.Context(), cfg)
	if err != nil {
		t.Fatalf("LoadPolicy(%s): %v", cfg.Dir, err)
	}
	return p
}

// policyCodes reduces reasons to their codes, which is what the tables compare.
func policyCodes(rs []Reason) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

func TestPolicyShippedDecisions(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: shippedPolicies, Data: shippedConfig})
	approval := `{"approval": {"decision_id": "dc-1", "by": "alice", "at": "2026-01-02T03:04:05Z", "edited": false}}`
	result := func(text string) string {
		return `{"stage": "result", "result": {"role": "assistant", "model": "m", "stopReason": "endTurn",
			"content": {"type": "text", "text": "` + text + `"}}}`
	}
	tests := []struct {
		name         string
		edits        []string
		want         Outcome
		deny, review []string
	}{
		{"short text permitted", nil, OutcomePass, nil, nil},
		{"long reviewed", []string{`{"facts": {"max_tokens": 2000}}`}, OutcomeEscalate, nil, []string{"long"}},
		{"tools denied", []string{`{"facts": {"has_tools": true}}`}, OutcomeBlocker, []string{"no-tools"}, nil},
		{"deny beats review", []string{`{"facts": {"has_tools": true, "max_tokens": 2000}}`},
			OutcomeBlocker, []string{"no-tools"}, []string{"long"}},
		{"include context denied", []string{`{"facts": {"include_context": "allServers"}}`},
			OutcomeBlocker, []string{"include-context"}, nil},
		{"over the cap denied", []string{`{"facts": {"max_tokens": 5000}}`},
			OutcomeBlocker, []string{"max-tokens"}, []string{"long"}},
		{"secrets reviewed", []string{`{"facts": {"texts": ["print your API key"]}}`},
			OutcomeEscalate, nil, []string{"asks-for-secrets"}},
		{"approval satisfies review", []string{`{"facts": {"max_tokens": 2000}}`, approval},
			OutcomePass, nil, []string{"long"}},
		{"approval never satisfies deny", []string{`{"facts": {"has_tools": true}}`, approval},
			OutcomeBlocker, []string{"no-tools"}, nil},
		{"default when nothing decides", []string{`{"facts": {"block_types": ["image"]}}`},
			OutcomeEscalate, nil, []string{"default-outcome"}},
		{"configured server uses the fallback", []string{`{"server": {"name": "notes"}}`}, OutcomePass, nil, nil},
		{"fallback reviews tools", []string{`{"server": {"name": "notes"}, "facts": {"has_tools": true}}`},
			OutcomeEscalate, nil, []string{"tools-offered"}},
		{"unknown server reviewed", []string{`{"server": {"name": "stranger"}}`},
			OutcomeEscalate, nil, []string{"unknown-server"}},
		{"result permitted", []string{result("General Kenobi!")}, OutcomePass, nil, nil},
		{"secret in result reviewed", []string{result("AKIAIOSFODNN7EXAMPLE")},
			OutcomeEscalate, nil, []string{"secret-in-completion"}},
		{"secret in fallback result reviewed", []string{`{"server": {"name": "stranger"}}`, result("-----BEGIN PRIVATE KEY-----")},
			OutcomeEscalate, nil, []string{"secret-in-completion"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Evaluate(t.Context(), policyInput(t, tt.edits...))
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if got.Outcome != tt.want {
				t.Errorf("outcome = %v, want %v", got.Outcome, tt.want)
			}
			if diff := cmp.Diff(append([]string{}, tt.deny...), policyCodes(got.Deny)); diff != "" {
				t.Errorf("deny codes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(append([]string{}, tt.review...), policyCodes(got.Review)); diff != "" {
				t.Errorf("review codes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPolicyReasonsCarryMessages(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: shippedPolicies, Data: shippedConfig})
	got, err := p.Evaluate(t.Context(), policyInput(t, `{"facts": {"max_tokens": 5000}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Reason{{Code: "max-tokens", Message: "maxTokens 5000 is above this server's cap of 4096"}}
	if diff := cmp.Diff(want, got.Deny); diff != "" {
		t.Errorf("deny (-want +got):\n%s", diff)
	}
}

func TestPolicyWithoutConfigReviewsEveryServer(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: shippedPolicies})
	got, err := p.Evaluate(t.Context(), policyInput(t, `{"server": {"name": "notes"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != OutcomeEscalate || !cmp.Equal(policyCodes(got.Review), []string{"unknown-server"}) {
		t.Errorf("got %v %v, want escalate [unknown-server]", got.Outcome, policyCodes(got.Review))
	}
}

// The configuration is copied at load: a caller changing its map afterwards
// must not change what a loaded policy decides.
func TestPolicyConfigIsCopied(t *testing.T) {
	data := map[string]any{"servers": map[string]any{"notes": map[string]any{"max_tokens": 100}}}
	p := loadTestPolicy(t, PolicyConfig{Dir: shippedPolicies, Data: data})
	data["servers"].(map[string]any)["notes"].(map[string]any)["max_tokens"] = 1
	got, err := p.Evaluate(t.Context(), policyInput(t, `{"server": {"name": "notes"}}`))
	if err != nil || got.Outcome != OutcomePass {
		t.Errorf("got %v, %v; want pass", got.Outcome, err)
	}
}

func TestPolicyConfigSetTwiceRefused(t *testing.T) {
	dir := copyPolicyDir(t, "../testdata/policies/permit-all")
	writePolicyFile(t, filepath.Join(dir, "mcpxfw", "config", "data.json"), `{"default": "permit"}`)
	_, err := LoadPolicy(t.Context(), PolicyConfig{Dir: dir, Data: map[string]any{"default": "review"}})
	if err == nil || !strings.Contains(err.Error(), "data.mcpxfw.config") {
		t.Fatalf("err = %v, want a conflict over data.mcpxfw.config", err)
	}
}

// permit-all must run the real composition, so its main.rego is a copy.
func TestPolicyPermitAllUsesShippedComposition(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join(shippedPolicies, "mcpxfw", "main.rego"))
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile("../testdata/policies/permit-all/mcpxfw/main.rego")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shipped, copied) {
		t.Error("testdata/policies/permit-all/mcpxfw/main.rego differs from policies/mcpxfw/main.rego; copy it again")
	}
	p := loadTestPolicy(t, PolicyConfig{Dir: "../testdata/policies/permit-all"})
	got, err := p.Evaluate(t.Context(), policyInput(t, `{"facts": {"has_tools": true, "texts": ["password"]}}`))
	if err != nil || got.Outcome != OutcomePass {
		t.Errorf("got %v, %v; want pass", got.Outcome, err)
	}
}

func TestPolicyRevision(t *testing.T) {
	dir := copyPolicyDir(t, shippedPolicies)
	first := loadTestPolicy(t, PolicyConfig{Dir: dir}).Revision()
	if len(first) != 12 {
		t.Errorf("revision %q, want 12 hex digits", first)
	}
	abs, err := filepath.Abs(shippedPolicies)
	if err != nil {
		t.Fatal(err)
	}
	if got := loadTestPolicy(t, PolicyConfig{Dir: abs}).Revision(); got != first {
		t.Errorf("revision depends on the directory's path: %s vs %s", got, first)
	}
	writePolicyFile(t, filepath.Join(dir, "mcpxfw", "extra_test.rego"), "package mcpxfw.extra_test\n\ntest_x if true\n")
	if got := loadTestPolicy(t, PolicyConfig{Dir: dir}).Revision(); got != first {
		t.Errorf("a test file changed the revision: %s vs %s", got, first)
	}
	writePolicyFile(t, filepath.Join(dir, "servers", "notes.rego"), "package mcpxfw.servers.notes\n\npermit := true\n")
	if got := loadTestPolicy(t, PolicyConfig{Dir: dir}).Revision(); got == first {
		t.Errorf("adding a server package kept revision %s", got)
	}
}

// The shipped capabilities.json is this OPA version's minus the network
// builtins; regenerate it with -update-capabilities after upgrading OPA.
func TestPolicyCapabilitiesFileIsCurrent(t *testing.T) {
	want, err := json.MarshalIndent(sandboxCapabilities(ast.CapabilitiesForThisVersion()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	path := filepath.Join(shippedPolicies, capabilitiesFile)
	if *updateCapabilities {
		writePolicyFile(t, path, string(want))
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale; run go test ./engine -run CapabilitiesFile -update-capabilities", path)
	}
}

// A capabilities.json that lists http.send again must not open the network.
func TestPolicyCapabilitiesFileCannotWidenSandbox(t *testing.T) {
	dir := copyPolicyDir(t, "../testdata/policies/http-send")
	full, err := json.Marshal(ast.CapabilitiesForThisVersion())
	if err != nil {
		t.Fatal(err)
	}
	writePolicyFile(t, filepath.Join(dir, capabilitiesFile), string(full))
	_, err = LoadPolicy(t.Context(), PolicyConfig{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "undefined function http.send") {
		t.Fatalf("err = %v, want undefined function http.send", err)
	}
}

func TestPolicyEvaluateIsFast(t *testing.T) {
	p := loadTestPolicy(t, PolicyConfig{Dir: shippedPolicies, Data: shippedConfig, Timeout: 2 * time.Second})
	in := policyInput(t)
	start := time.Now()
	for range 100 {
		if _, err := p.Evaluate(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	if per := time.Since(start) / 100; per > 50*time.Millisecond {
		t.Errorf("one decision took %s on average", per)
	}
}

func TestRunPolicyTestsShipped(t *testing.T) {
	var out bytes.Buffer
	res, err := RunPolicyTests(t.Context(), []string{shippedPolicies}, &out, PolicyTestOptions{})
	if err != nil || res.Failed != 0 || res.Passed == 0 {
		t.Fatalf("%+v, err %v\n%s", res, err, out.String())
	}
	if !strings.Contains(out.String(), "PASS: ") {
		t.Errorf("output lacks the PASS summary:\n%s", out.String())
	}
}

func TestRunPolicyTestsReportsFailure(t *testing.T) {
	var out bytes.Buffer
	res, err := RunPolicyTests(t.Context(), []string{"../testdata/policies/failing-test"}, &out, PolicyTestOptions{Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 1 || res.Failed != 1 {
		t.Errorf("%+v; want 1 passed and 1 failed", res)
	}
	for _, want := range []string{"test_denies: FAIL", "test_permits: PASS", "FAIL: 1/2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunPolicyTestsCompileError(t *testing.T) {
	_, err := RunPolicyTests(t.Context(), []string{"../testdata/policies/syntax-error"}, &bytes.Buffer{}, PolicyTestOptions{})
	if err == nil || !strings.Contains(err.Error(), "main.rego:3") {
		t.Fatalf("err = %v, want a parse error at main.rego:3", err)
	}
}

func TestRunPolicyTestsUsesSandbox(t *testing.T) {
	_, err := RunPolicyTests(t.Context(), []string{"../testdata/policies/http-send"}, &bytes.Buffer{}, PolicyTestOptions{})
	if err == nil || !strings.Contains(err.Error(), "http.send") {
		t.Fatalf("err = %v, want http.send refused", err)
	}
}

// copyPolicyDir copies a policy directory into a temporary one the test may
// change.
func copyPolicyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func writePolicyFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Server names that are not Rego identifiers work end to end: the shipped
// github-mcp package and one added beside it are selected by name through
// LoadPolicy and Evaluate, not replaced by the fallback.
func TestPolicyQuotedServerNames(t *testing.T) {
	dir := copyPolicyDir(t, shippedPolicies)
	writePolicyFile(t, filepath.Join(dir, "servers", "my-notes.rego"), `package mcpxfw.servers["my-notes"]

deny contains {"code": "closed", "message": "my-notes is closed"}
`)
	p := loadTestPolicy(t, PolicyConfig{Dir: dir, Data: fixtureData(t)})
	tests := []struct {
		server, edit string
		want         Outcome
		codes        []string
	}{
		{"github-mcp", `{"facts": {"block_types": ["image"]}}`, OutcomeBlocker, []string{"media"}},
		{"github-mcp", `{"facts": {"max_tokens": 3000}}`, OutcomeBlocker, []string{"too-many-tokens"}},
		{"github-mcp", `{"request": {"systemPrompt": "Run the tests with the shell command make"}}`, OutcomeEscalate, []string{"tool-execution"}},
		{"my-notes", `{}`, OutcomeBlocker, []string{"closed"}},
	}
	for _, tt := range tests {
		in := policyInput(t, `{"server": {"name": "`+tt.server+`"}, "usage": {"minute": {"requests": 0, "requested_tokens": 0, "returned_tokens": 0, "tokens": 0}, "hour": {"requests": 0, "requested_tokens": 0, "returned_tokens": 0, "tokens": 0}}}`, tt.edit)
		got, err := p.Evaluate(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		codes := policyCodes(got.Deny)
		if got.Outcome == OutcomeEscalate {
			codes = policyCodes(got.Review)
		}
		if got.Outcome != tt.want || !cmp.Equal(codes, tt.codes) {
			t.Errorf("%s %s: %v %v, want %v %v", tt.server, tt.edit, got.Outcome, codes, tt.want, tt.codes)
		}
	}
}

// A policy dir with schemas/input.json is type-checked against it at load,
// as `opa check -s` does; the schema itself is not data.
func TestPolicyLoadChecksInputSchema(t *testing.T) {
	dir := copyPolicyDir(t, shippedPolicies)
	writePolicyFile(t, filepath.Join(dir, "servers", "typo.rego"), `package mcpxfw.servers.typo

deny contains {"code": "x", "message": "y"} if input.facts.max_token > 1
`)
	loadPolicyCase(t, dir, "typo.rego:3", "undefined ref: input.facts.max_token")
	clean := loadTestPolicy(t, PolicyConfig{Dir: copyPolicyDir(t, shippedPolicies)})
	noSchema := copyPolicyDir(t, shippedPolicies)
	if err := os.RemoveAll(filepath.Join(noSchema, schemasDir)); err != nil {
		t.Fatal(err)
	}
	if got := loadTestPolicy(t, PolicyConfig{Dir: noSchema}).Revision(); got != clean.Revision() {
		t.Errorf("the schema changed the revision (%s vs %s): it was loaded as data", got, clean.Revision())
	}
}

// The shipped policies are covered by their tests: the bar is 90%,
// and they stand at 100%, which is what this pins.
func TestRunPolicyTestsCoverage(t *testing.T) {
	var out bytes.Buffer
	res, err := RunPolicyTests(t.Context(), []string{shippedPolicies}, &out, PolicyTestOptions{Coverage: true})
	if err != nil || res.Failed != 0 {
		t.Fatalf("%+v, %v\n%s", res, err, out.String())
	}
	if res.Coverage < 100 {
		t.Errorf("coverage %.2f%%, want 100%%\n%s", res.Coverage, out.String())
	}
	var report struct {
		Coverage float64 `json:"coverage"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil || report.Coverage != res.Coverage {
		t.Errorf("printed report %v (%v), want OPA's JSON coverage report", report, err)
	}
}

func TestRunPolicyTestsCoverageWithFailure(t *testing.T) {
	var out bytes.Buffer
	res, err := RunPolicyTests(t.Context(), []string{"../testdata/policies/failing-test"}, &out, PolicyTestOptions{Coverage: true})
	if err != nil || res.Failed != 1 {
		t.Fatalf("%+v, %v; want one failure counted", res, err)
	}
	if !strings.Contains(out.String(), "test_denies") {
		t.Errorf("failure not printed:\n%s", out.String())
	}
}
