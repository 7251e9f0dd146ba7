package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shadowSaysNo denies everything, added to a copy of the shipped policies:
// a candidate stricter than the active policy everywhere.
const shadowSaysNo = "package mcpxfw.global\n\ndeny contains {\"code\": \"shadow-says-no\", \"message\": \"the candidate refuses\"} if true\n"

// withShadow puts policy.shadow (dir and timeout) into cfg.
func withShadow(t *testing.T, cfg, dir, timeout string) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	section := "policy:\n  shadow:\n    dir: " + dir + "\n    timeout: " + timeout + "\n"
	if err := os.WriteFile(cfg, bytes.Replace(b, []byte("policy:\n"), []byte(section), 1), 0o600); err != nil {
		t.Fatal(err)
	}
}

// loggedShadow is one decision-log line's result outcome and its
// custom.shadow object.
type loggedShadow struct {
	Result struct {
		Outcome string `json:"outcome"`
	} `json:"result"`
	Custom struct {
		Shadow struct {
			Revision string           `json:"revision"`
			Outcome  string           `json:"outcome"`
			Reasons  []map[string]any `json:"reasons"`
			Error    map[string]any   `json:"error"`
		} `json:"shadow"`
	} `json:"custom"`
}

// readShadowLog reads the decision log serve wrote beside cfg.
func readShadowLog(t *testing.T, cfg string) []loggedShadow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []loggedShadow
	for line := range bytes.Lines(b) {
		var ev loggedShadow
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("decision log line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// stopServe interrupts serve and waits for it to exit, as an operator's
// stop does: every decision's log line must be written by then.
func stopServe(t *testing.T, s *httpServe) {
	t.Helper()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s of an interrupt")
	}
	_ = s.cmd.Wait()
}

const shadowHello = `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":100}`

// Real binary, real peers: with a shadow policy that denies what the
// active one permits, the upstream gets the active outcome (its
// completion), while the decision log lines, the metrics and `status`
// show the shadow's blocker at both stages.
func TestShadowPolicyServe(t *testing.T) {
	shadow := filepath.Join(t.TempDir(), "shadow")
	if err := os.CopyFS(shadow, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(shadow, "mcpxfw"), "shadow_says_no.rego", shadowSaysNo)
	cfg := opsConfig(t, repoPath(t, "policies"), peerServer("alpha", 1000)+peerServer("beta", 1000))
	withShadow(t, cfg, shadow, "250ms")
	appendConfig(t, cfg, "replay:\n  keep: 72h\n  max_bytes: 1048576\n") // as README's workflow shadows a change
	s := startOpsServe(t, cfg)
	sampleCompletes(t, s)
	for _, stage := range []string{"request", "result"} {
		labels := map[string]string{"server": "alpha", "kind": "sampling", "stage": stage, "active": "pass", "shadow": "blocker"}
		waitFor(t, "the shadow's "+stage+" counted", func() bool {
			_, mfs := scrape(t, s.ops)
			return sample(mfs, "mcpxfw_shadow_decisions_total", labels) == 1
		})
	}
	st, _ := statusJSON(t, cfg, s.ops)
	if st.Shadow == nil || st.Shadow.Revision == "" || st.Shadow.Revision == st.Policy.Revision || len(st.Shadow.Disagreements) != 1 ||
		st.Shadow.Disagreements[0].Active != "pass" || st.Shadow.Disagreements[0].Shadow != "blocker" || st.Shadow.Disagreements[0].Count != 2 {
		t.Errorf("status shadow %+v, want its own revision and 2 pass -> blocker", st.Shadow)
	}
	if st.Replay == nil || st.Replay.KeepSeconds != 72*3600 || st.Replay.MaxBytes != 1<<20 || st.Replay.Dropped != 0 {
		t.Errorf("status replay %+v, want kept 72h within 1 MiB, none dropped", st.Replay)
	}
	res := runCLI(t, "status", "--config", cfg, "--addr", strings.TrimPrefix(s.ops, "http://"))
	if !strings.Contains(res.stdout, "shadow policy: revision "+st.Shadow.Revision) || !strings.Contains(res.stdout, "pass -> blocker 2") ||
		!strings.Contains(res.stdout, "replay: each decision's policy input kept 72h0m0s, within 1048576 bytes (1.0 MiB); since start 0 not kept") {
		t.Errorf("status:\n%s", res.stdout)
	}
	stopServe(t, s.httpServe)
	lines := readShadowLog(t, cfg)
	if len(lines) != 2 {
		t.Fatalf("%d decision log lines, want the request's and the result's", len(lines))
	}
	for _, l := range lines {
		if l.Result.Outcome != "pass" || l.Custom.Shadow.Outcome != "blocker" || l.Custom.Shadow.Revision != st.Shadow.Revision ||
			len(l.Custom.Shadow.Reasons) == 0 || l.Custom.Shadow.Reasons[0]["code"] != "shadow-says-no" {
			t.Errorf("logged %+v, want the active pass beside the shadow's blocker", l)
		}
	}
}

// A shadow that does not compile, and one that runs out of time: serve
// starts and decides with the active policy alone, and both are reported
// (check's warning, status, the log's custom.shadow.error, the metrics).
func TestShadowFailuresServe(t *testing.T) {
	tests := []struct {
		name, dir, timeout string
		status             func(failing bool, timeouts int64) bool
		checkSays          string
	}{
		{"does not compile", repoPath(t, "testdata/policies/syntax-error"), "250ms",
			func(failing bool, _ int64) bool { return failing }, "warning: shadow policy"},
		{"times out", repoPath(t, "testdata/policies/slow"), "10ms",
			func(failing bool, timeouts int64) bool { return !failing && timeouts == 2 }, "shadow policy: dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := opsConfig(t, repoPath(t, "policies"), peerServer("alpha", 1000)+peerServer("beta", 1000))
			withShadow(t, cfg, tt.dir, tt.timeout)
			if res := runCLI(t, "check", "--config", cfg); res.code != 0 || !strings.Contains(res.stdout, tt.checkSays) {
				t.Errorf("check: exit %d, want 0 and %q\n%s\n%s", res.code, tt.checkSays, res.stdout, res.stderr)
			}
			s := startOpsServe(t, cfg)
			sampleCompletes(t, s)
			waitFor(t, "the shadow's failures counted", func() bool {
				_, mfs := scrape(t, s.ops)
				return sample(mfs, "mcpxfw_shadow_decisions_total",
					map[string]string{"server": "alpha", "kind": "sampling", "stage": "result", "active": "pass", "shadow": "error"}) == 1
			})
			st, _ := statusJSON(t, cfg, s.ops)
			if st.Shadow == nil || !tt.status(st.Shadow.Revision == "" && st.Shadow.LastError != "", st.Shadow.Timeouts) || st.Shadow.Errors != 2 || !st.Ready {
				t.Errorf("status: ready %v, shadow %+v", st.Ready, st.Shadow)
			}
			stopServe(t, s.httpServe)
			for _, l := range readShadowLog(t, cfg) {
				if l.Result.Outcome != "pass" || l.Custom.Shadow.Outcome != "error" || l.Custom.Shadow.Error == nil {
					t.Errorf("logged %+v, want the active pass beside the shadow's error", l)
				}
			}
		})
	}
}

// sampleCompletes has alpha push shadowHello through s to a host that
// answers it, and fails the test unless the upstream gets the completion:
// the active policy's outcome, whatever the shadow says.
func sampleCompletes(t *testing.T, s *opsServe) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	h := s.connectHost(ctx, t)
	defer h.Close()
	got, err := faultSampleErr(ctx, h.Host, "alpha", shadowHello)
	if err != nil || sawAs(got) != "completed" {
		t.Fatalf("the upstream saw %+v, %v; want the active policy's completion", got, err)
	}
}
