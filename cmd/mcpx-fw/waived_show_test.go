package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// TestReviewShowsWaivers: a review opened on a decision whose server
// package waived a baseline reason says so in review show, its --json and
// the console's review page, read back from the store.
func TestReviewShowsWaivers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	pkg := `package mcpxfw.servers.peer

permit := true

waive contains "secret-in-completion"

review contains {"code": "looked-at", "message": "every answer"} if input.stage == "result"
`
	if err := os.WriteFile(filepath.Join(dir, "servers", "peer.rego"), []byte(pkg), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, dir, time.Minute, peerServer("peer", 1000))
	e, err := engine.New(t.Context(), engine.Config{Policy: engine.PolicyConfig{Dir: dir}, ReviewTimeout: time.Minute}, openStore(t, cfg), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	s := engine.Request{Kind: engine.KindSampling, Server: engine.Server{Name: "peer", Label: "Test peer peer", Era: "2025-11-25"},
		Host:   engine.Host{Era: "2025-11-25", Capabilities: map[string]any{"sampling": map[string]any{}}},
		Params: []byte(`{"maxTokens":100,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)}
	completion := `{"role":"assistant","model":"m","content":{"type":"text","text":"AKIAIOSFODNN7EXAMPLE"},"stopReason":"endTurn"}`
	v := e.Check(t.Context(), s, []byte(completion))
	if v.Outcome != engine.OutcomeEscalate || v.ReviewID == "" {
		t.Fatalf("result: %v %v %v, want a review for looked-at", v.Outcome, v.ReasonCodes(), v.Err)
	}
	show := runCLI(t, "review", "show", v.ReviewID, "--config", cfg)
	if show.code != 0 || !strings.Contains(show.stdout, "\n  waived by the server's policy: [secret-in-completion] ") {
		t.Errorf("review show: exit %d, names no waiver:\n%s%s", show.code, show.stdout, show.stderr)
	}
	var it struct{ Waived []engine.Reason }
	if err := json.Unmarshal([]byte(runCLI(t, "review", "show", v.ReviewID, "--json", "--config", cfg).stdout), &it); err != nil ||
		len(it.Waived) != 1 || it.Waived[0].Code != "secret-in-completion" {
		t.Errorf("review show --json: waived %v (%v), want secret-in-completion", it.Waived, err)
	}
	rt, err := startOperator(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.close()
	rv, err := consoleActions{rt: rt}.Review(t.Context(), v.ReviewID)
	if err != nil || len(rv.Waived) != 1 || !strings.HasPrefix(rv.Waived[0], "[secret-in-completion] ") {
		t.Errorf("console review: waived %q (%v), want secret-in-completion", rv.Waived, err)
	}
}
