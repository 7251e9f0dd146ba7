package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// reviewHeldCall is the outcome of one held call of the TypeScript SDK
// host, as hostlegacy.mjs prints it.
type reviewHeldCall struct {
	Result json.RawMessage
	Error  *struct {
		Code    int64
		Message string
	}
	Progress []struct {
		Progress float64
		Message  string
	}
}

// TestReviewOutlivesHostTimeout: a TypeScript SDK host (1.32.2) whose call
// times out after 3s, and starts its timeout again at each progress it
// hears (resetTimeoutOnProgress), gets its completion after a review
// approved 10s later: serve sends the call progress while the review holds
// it. A call that gave no progress token hears nothing, times out as it
// always did, and its review ends abandoned.
func TestReviewOutlivesHostTimeout(t *testing.T) {
	node := nodeSetup(t) // before anything with a deadline: the first run installs
	for _, tc := range []struct {
		name     string
		progress bool
	}{{"with a progress token", true}, {"without a progress token", false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, repoPath(t, "policies"), 2*time.Minute, peerServer("peer", 1000))
			withProgressInterval(t, cfg, "1s")
			call := map[string]any{"name": "sample", "arguments": map[string]any{"params": json.RawMessage(secretRequest)},
				"timeout_ms": 3000, "progress": tc.progress, "reset_on_progress": true}
			out := make(chan []byte, 1)
			go func() { out <- runLegacyNPMHost(t, node, []any{call}, binary, "serve", "--config", cfg) }()
			id := waitPending(t, cfg)
			if tc.progress {
				time.Sleep(10 * time.Second) // the acceptance's wall-clock review
				if res := runCLI(t, "review", "approve", id, "--config", cfg); res.code != 0 {
					t.Fatalf("review approve: exit %d: %s", res.code, res.stderr)
				}
			}
			got := heldCallOf(t, <-out)
			if !tc.progress {
				if got.Error == nil || got.Error.Code != -32001 || len(got.Progress) != 0 {
					t.Fatalf("the call without a token got %+v, want the host's own timeout (-32001) and no progress", got)
				}
				waitState(t, cfg, id, review.StateAbandoned)
				return
			}
			if got.Error != nil || !strings.Contains(string(got.Result), "npm-host-legacy says hi") {
				t.Fatalf("the call got %s, want its completion", mustJSON(t, got))
			}
			for i, p := range got.Progress {
				if p.Message != "waiting for review" || (i > 0 && p.Progress <= got.Progress[i-1].Progress) {
					t.Fatalf("progress %d: %+v, want serve's, each above the last", i, got.Progress)
				}
			}
		})
	}
}

// withProgressInterval sets review.progress_interval in the config
// testConfig wrote.
func withProgressInterval(t *testing.T, cfg, every string) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "review:\n", "review:\n  progress_interval: "+every+"\n", 1)
	if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// heldCallOf reads the one call of the host's line.
func heldCallOf(t *testing.T, line []byte) reviewHeldCall {
	t.Helper()
	var got struct {
		Calls []reviewHeldCall
		Error json.RawMessage
	}
	if err := json.Unmarshal(line, &got); err != nil || got.Error != nil || len(got.Calls) != 1 {
		t.Fatalf("npm host printed %s (%v)", line, err)
	}
	return got.Calls[0]
}

// waitState waits until review id is in state st.
func waitState(t *testing.T, cfg, id string, st review.State) {
	t.Helper()
	s := openStore(t, cfg)
	var last review.State
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		it, err := s.Get(t.Context(), id)
		if err == nil && it.State == st {
			return
		}
		last = it.State
	}
	t.Fatalf("review %s is %s, want %s", id, last, st)
}
