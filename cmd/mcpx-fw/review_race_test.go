package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sync"
	"testing"
	"time"
)

// TestTwentyApproversOneWins: twenty operators run `review approve` on the
// same item at the same moment, each in its own process. Exactly one wins;
// the other nineteen are refused (exit 1) with a message naming who
// decided; the audit log holds one approval; the upstream gets one answer.
func TestTwentyApproversOneWins(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	answered := make(chan error, 1)
	go func() {
		got, err := host.Sample(t.Context(), json.RawMessage(secretRequest))
		if err == nil && got.Error != nil {
			err = got.Error
		}
		answered <- err
	}()
	id := waitPending(t, cfg)

	const n = 20
	results := make([]cliResult, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = runQuiet(t.Context(), "review", "approve", id, "--config", cfg)
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(began)

	refusal := regexp.MustCompile(`^mcpx-fw: ` + id + ` was (already approved|approved) by (\S+) at \S+`)
	wins, refused := 0, 0
	for i, r := range results {
		switch m := refusal.FindStringSubmatch(r.stderr); {
		case r.code == 0:
			wins++
		case r.code == 1 && m != nil && oneLine(r.stderr) && m[2] == operator():
			refused++
		default:
			t.Errorf("approver %d: exit %d, stderr %q; want a win or a one-line refusal naming the winner", i, r.code, r.stderr)
		}
	}
	if wins != 1 || refused != n-1 {
		t.Fatalf("%d won, %d refused; want 1 and %d", wins, refused, n-1)
	}
	if err := <-answered; err != nil {
		t.Fatalf("the upstream got %v, want the completion", err)
	}
	if got := auditEvents(t, cfg, id)["approved"]; got != 1 {
		t.Errorf("audit holds %d approvals of %s, want 1", got, id)
	}
	t.Logf("%d concurrent approvers: %d won, %d refused naming the winner, in %v", n, wins, refused, took.Round(time.Millisecond))
}

// auditEvents counts the audit log's events for one review, read through
// `mcpx-fw audit --json`.
func auditEvents(t *testing.T, cfg, id string) map[string]int {
	t.Helper()
	res := runCLI(t, "audit", "--json", "--config", cfg)
	if res.code != 0 {
		t.Fatalf("audit: exit %d: %s", res.code, res.stderr)
	}
	counts := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader([]byte(res.stdout)))
	for dec.More() {
		var e struct{ Event, ReviewID string }
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		e.Event, _ = raw["event"].(string)
		e.ReviewID, _ = raw["review_id"].(string)
		if id == "" || e.ReviewID == id {
			counts[e.Event]++
		}
	}
	return counts
}
