//go:build unix

package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestNotifyOpenAndCancel: an upstream that opens a review and cancels
// it at once, again and again, holds one pending review at a time, within
// every limit on pending reviews; it is announced no more than
// review.notify.max_per_minute (6) times a minute however many it opens,
// while another server's review is still announced at once.
func TestNotifyOpenAndCancel(t *testing.T) {
	t.Parallel()
	const cycles = 9
	script, record := recorder(t)
	cfg := testConfig(t, notifyPolicy(t), time.Minute, notifyServer()+peerServer("other", 1000))
	writeNotify(t, cfg, "    command: ["+quoteArgs(script, record)+"]\n    max_running: 1\n")
	host := startNotifyFirewall(t, cfg, "", answerWith(hostAnswer))
	st := openStore(t, cfg)
	for i := range cycles {
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			_, _ = host.CallTool(ctx, "peer__sample", map[string]any{"params": json.RawMessage(notifyCanaryRequest)})
		}()
		waitItems(t, st, review.StatePending, 1)
		cancel()
		waitItems(t, st, review.StateAbandoned, i+1)
	}
	go func() {
		_, _ = host.CallTool(t.Context(), "other__sample", map[string]any{"params": json.RawMessage(notifyCanaryRequest)})
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// One run at a time, in the order queued: once the other
		// server's review is announced, so is every earlier one.
		if n := announced(t, record)["other"]; n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the other server's review was never announced")
		}
	}
	if n := announced(t, record)["peer"]; n != 6 {
		t.Errorf("%d reviews of peer announced in %d opened within a minute, want 6 (review.notify.max_per_minute)", n, cycles)
	}
	rejectNext(t, cfg)
}

// waitItems polls st until n of its items are in state.
func waitItems(t *testing.T, st *review.Store, state review.State, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		items, err := st.List(t.Context(), review.Filter{All: true})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, it := range items {
			if it.State == state {
				got++
			}
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d reviews %s, want %d", got, state, n)
		}
	}
}

// announced counts the recorded runs by server.
func announced(t *testing.T, record string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, r := range readRuns(t, record) {
		n[r.env["MCPXFW_SERVER"]]++
	}
	return n
}
