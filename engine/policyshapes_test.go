package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMisshapenReasons: a server package whose deny rule gives a string,
// and a global review rule whose message is a number, are each named with
// what they gave, on the same input the decision (which fails closed)
// saw; the shipped policies give none, whatever they decide.
func TestMisshapenReasons(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(dir, os.DirFS(shippedPolicies)); err != nil {
		t.Fatal(err)
	}
	writePolicyFile(t, filepath.Join(dir, "servers", "notes.rego"), "package mcpxfw.servers.notes\n\ndeny contains \"no\" if input.kind == \"sampling\"\n")
	writePolicyFile(t, filepath.Join(dir, "mcpxfw", "global.rego"), "package mcpxfw.global\n\nreview contains {\"code\": \"n\", \"message\": 1} if input.kind == \"sampling\"\n")
	e, _ := newTestEngine(t, Config{Policy: PolicyConfig{Dir: dir}})
	req := sampling("notes", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`)
	v, bad, err := e.MisshapenReasons(t.Context(), StageRequest, req, nil)
	if err != nil || v.Outcome != OutcomeError || len(bad) != 2 {
		t.Fatalf("MisshapenReasons = %v, %+v, %v; want an error verdict and two reasons", v.Outcome, bad, err)
	}
	got := bad[0].Rule + " " + bad[0].Err.Error() + "; " + bad[1].Rule + " " + bad[1].Err.Error()
	if want := "data.mcpxfw.global.review message is a number, not a string; data.mcpxfw.servers.notes.deny reason is a string, not an object"; got != want || bad[1].Value != "no" {
		t.Errorf("MisshapenReasons named %q (value %v), want %q", got, bad[1].Value, want)
	}
	shipped, _ := newTestEngine(t, Config{})
	if _, bad, err := shipped.MisshapenReasons(t.Context(), StageRequest, req, nil); err != nil || len(bad) != 0 {
		t.Errorf("the shipped policies: %+v, %v; want no reason of the wrong shape", bad, err)
	}
}
