package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
)

// richRequest has everything show must render: a system prompt, settings,
// model preferences and metadata, an image, a tool call and its result
// with nested resources and structured content, and a tool offered with
// its schemas and annotations (which the shipped fallback policy
// escalates).
const richRequest = `{"systemPrompt":"You are terse.","maxTokens":300,"temperature":0.2,"stopSequences":["END"],
 "modelPreferences":{"hints":[{"name":"sonnet"}],"intelligencePriority":0.9},"metadata":{"trace":"t-42"},
 "tools":[{"name":"lookup","description":"Looks a word up","title":"Dictionary",
   "inputSchema":{"type":"object","properties":{"word":{"type":"string","description":"the word to define"},"lang":{"type":"string","enum":["en","fr"]}},"required":["word"]},
   "outputSchema":{"type":"object","properties":{"definition":{"type":"string","description":"what it means"}}},
   "annotations":{"readOnlyHint":true,"title":"Dictionary lookup"}}],
 "toolChoice":{"mode":"none"},
 "messages":[
  {"role":"user","content":[{"type":"text","text":"What does this show? \u001b[2J"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"priority":0.5}}]},
  {"role":"assistant","content":[{"type":"tool_use","id":"call-1","name":"lookup","input":{"word":"png"}}]},
  {"role":"user","content":[{"type":"tool_result","toolUseId":"call-1","content":[{"type":"text","text":"an image format"},
    {"type":"resource_link","uri":"https://example.com/png","name":"png-spec","description":"The PNG spec"},
    {"type":"resource","resource":{"uri":"file:///png.txt","mimeType":"text/plain","text":"Portable Network Graphics"}}],
   "structuredContent":{"definition":"a lossless image format"}}]}]}`

func TestReviewShowRendersTheWholeRequest(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	done := make(chan error, 1)
	go func() {
		got, err := host.Sample(t.Context(), json.RawMessage(richRequest))
		if err == nil && got.Error != nil {
			err = got.Error
		}
		done <- err
	}()
	id := waitPending(t, cfg)

	show := runCLI(t, "review", "show", id, "--config", cfg)
	for _, want := range []string{
		"Server:   peer — Test peer peer", "Stage:    request", "Protocol: 2025-11-25",
		"[tools-offered]", "left)", "System prompt:", "You are terse.",
		"What does this show? \\x1b[2J", // escape sequences are shown, not obeyed
		"[image image/png, 8 bytes]", `annotations: {"priority":0.5}`, `[tool_use lookup id=call-1] input: {"word":"png"}`,
		"[tool_result for call-1]", "│ an image format", "maxTokens: 300", "temperature: 0.2", `stopSequences: ["END"]`,
		`modelPreferences: {"hints":[{"name":"sonnet"}],"intelligencePriority":0.9}`, `metadata: {"trace":"t-42"}`,
		"[resource_link https://example.com/png]", `name: "png-spec"`, `description: "The PNG spec"`,
		"[resource file:///png.txt, text/plain]", "│ Portable Network Graphics",
		`structuredContent: {"definition":"a lossless image format"}`,
		"Tools offered (1), tool choice none", "lookup: Looks a word up", `title: "Dictionary"`,
		"inputSchema:", `lang: {"enum":["en","fr"],"type":"string"}`, `word: {"description":"the word to define","type":"string"}`,
		`required: ["word"]`, `outputSchema: {"properties":{"definition":{"description":"what it means","type":"string"}},"type":"object"}`,
		`annotations: {"idempotentHint":false,"readOnlyHint":true,"title":"Dictionary lookup"}`,
		"mcpx-fw review approve " + id + " --config " + cfg, "mcpx-fw review reject " + id,
	} {
		if !strings.Contains(rendertest.JoinRows(show.stdout), want) {
			t.Errorf("show is missing %q:\n%s", want, show.stdout)
		}
	}
	if strings.Contains(show.stdout, "\x1b") {
		t.Error("show printed a raw escape character from the request")
	}

	var item map[string]any
	res := runCLI(t, "review", "show", id, "--json", "--config", cfg)
	if err := json.Unmarshal([]byte(res.stdout), &item); err != nil {
		t.Fatalf("show --json: %v\n%s", err, res.stdout)
	}
	for _, key := range []string{"id", "server", "stage", "state", "created_at", "expires_at", "reasons", "request"} {
		if _, ok := item[key]; !ok {
			t.Errorf("show --json lacks %q", key)
		}
	}
	if res := runCLI(t, "review", "approve", id, "--config", cfg); res.code != 0 {
		t.Fatalf("approve: %d %s", res.code, res.stderr)
	}
	if err := <-done; err != nil {
		t.Fatalf("after approval the upstream got %v", err)
	}
	if res := runCLI(t, "review", "approve", id, "--config", cfg); res.code != 1 || !strings.Contains(res.stderr, "was approved by") {
		t.Errorf("approving twice: exit %d, %q; want 1 naming who decided", res.code, res.stderr)
	}
}

func TestPolicyTestCommand(t *testing.T) {
	res := runCLI(t, "policy", "test", repoPath(t, "policies"))
	if res.code != 0 || !strings.Contains(res.stdout, "PASS") {
		t.Fatalf("policy test: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, "policy", "test", repoPath(t, "testdata/policies/failing-test"))
	if res.code != 1 {
		t.Fatalf("policy test on a failing test: exit %d, want 1\n%s", res.code, res.stdout)
	}
}

func TestDemo(t *testing.T) {
	res := runCLI(t, "demo")
	if res.code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"upstream got the completion", "error -1", "error -32602", "approve rv-", "expired after 3s awaiting review",
		`upstream got {"action":"accept","content":{"name":"Ada Lovelace"}}`,
		"blocker (form-asks-secret)", `upstream got {"action":"decline"}`,
		"escalate (url-host-not-allowed)", "serve checks the request once more and the user answers it",
		"blocker (url-not-https)", "All nine outcomes",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}
