package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestCrashAbandonsEveryPendingReview: serve is killed with SIGKILL while
// a hundred reviews wait. After a restart every one is listed as
// abandoned, none was delivered (no approval, no host call), approving one
// is refused, and the audit chain still verifies.
func TestCrashAbandonsEveryPendingReview(t *testing.T) {
	const n = 100
	cfg := testConfig(t, repoPath(t, "policies"), 10*time.Minute, peerServer("peer", 1000))
	appendConfig(t, cfg, unlimited)
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	for range n {
		go func() { _, _ = host.Sample(t.Context(), json.RawMessage(secretRequest)) }()
	}
	ids := waitPendingCount(t, cfg, n)

	killed := time.Now()
	killOwner(t, cfg, ids[0])
	_ = host.Close() // reaps the killed process, as init would
	again := startFirewall(t, cfg, answerWith(hostAnswer))
	restarted := time.Since(killed)

	res := runCLI(t, "review", "list", "--all", "--json", "--config", cfg)
	items, err := listLines[struct{ ID, State string }](res.stdout)
	if err != nil {
		t.Fatalf("list: %v\n%s", err, res.stdout)
	}
	abandoned := 0
	for _, it := range items {
		if it.State == "abandoned" {
			abandoned++
		}
	}
	if len(items) != n || abandoned != n {
		t.Fatalf("after the crash: %d items, %d abandoned; want %d and %d", len(items), abandoned, n, n)
	}
	events := auditEvents(t, cfg, "")
	if events["opened"] != n || events["abandoned"] != n || len(events) != 2 {
		t.Errorf("audit events = %v; want %d opened and %d abandoned, nothing else", events, n, n)
	}
	if len(host.Asked) != 0 || len(again.Asked) != 0 {
		t.Errorf("a host was asked %d+%d times; nothing may be delivered", len(host.Asked), len(again.Asked))
	}
	if r := runCLI(t, "review", "approve", ids[n/2], "--config", cfg); r.code != 1 || !strings.Contains(r.stderr, "abandoned") {
		t.Errorf("approving an abandoned review: exit %d, %q", r.code, r.stderr)
	}
	if r := runCLI(t, "audit", "--verify", "--config", cfg); r.code != 0 {
		t.Fatalf("audit --verify after the crash: exit %d: %s", r.code, r.stderr)
	}
	t.Logf("%d pending reviews; kill -9 to restarted serve with all abandoned: %v", n, restarted.Round(time.Millisecond))
}

// waitPendingCount waits until n reviews are pending and returns their ids.
func waitPendingCount(t *testing.T, cfg string, n int) []string {
	t.Helper()
	st := openStore(t, cfg)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		items, err := st.List(t.Context(), review.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) >= n {
			ids := make([]string, len(items))
			for i, it := range items {
				ids[i] = it.ID
			}
			return ids
		}
	}
	t.Fatalf("fewer than %d reviews pending after a minute", n)
	return nil
}
