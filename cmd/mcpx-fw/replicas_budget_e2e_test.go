package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestReplicasBudget: four servers, each with an hourly token budget of
// 40 requests' worth shared by three replicas (usage is the store's). 90
// permitted requests, each reserving its prompt (6 tokens) and its
// maxTokens (100), arrive at once for every server, through legacy hosts
// on every replica: for each server exactly 40 pass and reach the host,
// the other 50 are denied as over budget. The host holds every request it
// is asked until all 360 are decided, so no completion gives tokens back
// meanwhile and every pass is still counted at what it reserved.
func TestReplicasBudget(t *testing.T) {
	const (
		servers   = 4
		perServer = 90 // 30 from each replica's host
		maxTokens = 100
		budget    = 40 * (maxTokens + 6) // "Say hello. (ld-0-0001)": 6 tokens to read
		requests  = servers * perServer
	)
	storeURL := newDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rs := startBudgetReplicas(t, storeURL, servers, budget)
	f := newFront(t, rs)
	run := newLoadRun()
	gate := make(chan struct{})
	var arrived atomic.Int64
	answer := func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		arrived.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return run.answer(ctx, params)
	}
	var sessions []*loadSession
	for range replicaCount {
		h, err := peer.ConnectHTTP(ctx, f.URL(), peer.HostOptions{Answer: answer, Tools: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		for i := range servers {
			sessions = append(sessions, &loadSession{index: len(sessions), host: h.Host, server: fmt.Sprintf("load%d", i)})
		}
	}
	if on := f.sessionsOn(); len(on) != replicaCount || on[0] != 1 || on[1] != 1 || on[2] != 1 {
		t.Fatalf("legacy sessions per replica %v; want one on each", on)
	}

	permit := kindNamed(t, "permit")
	kinds := make([]*loadKind, perServer/replicaCount)
	for i := range kinds {
		kinds[i] = permit
	}
	sent := make(chan []*loadRequest, 1)
	go func() { sent <- run.send(t, ctx, sessions, kinds) }()
	decided := waitDecided(t, rs, requests)
	close(gate)
	reqs := <-sent
	t.Logf("%d requests decided across %d replicas %v after they were sent; the host was asked %d times", requests, len(rs), decided.Round(time.Millisecond), arrived.Load())

	passed, denied := map[string]int{}, map[string]int{}
	server := map[string]string{} // request id -> server
	for _, s := range sessions {
		for n := range s.next {
			server[fmt.Sprintf("ld-%d-%04d", s.index, n)] = s.server
		}
	}
	errs := &loadErrors{t: t, what: "budget"}
	for _, q := range reqs {
		switch o := run.outcome(q); {
		case o == nil:
			errs.errorf("%s: not exactly one outcome", q.id)
		case o.Error == nil:
			passed[server[q.id]]++
			if err := loadOutcomeErr(q, *o); err != nil {
				errs.errorf("%s: %v", q.id, err)
			}
		case o.Error.Code == -1 && strings.Contains(string(o.Error.Data), `"budget-exhausted"`):
			denied[server[q.id]]++
		default:
			errs.errorf("%s: error %d %q %s; want a pass or a budget denial", q.id, o.Error.Code, o.Error.Message, o.Error.Data)
		}
	}
	errs.close()
	total := 0
	for i := range servers {
		name := fmt.Sprintf("load%d", i)
		total += passed[name]
		if passed[name] != 40 || denied[name] != perServer-40 {
			t.Errorf("%s: %d passed, %d denied over budget; want exactly %d and %d", name, passed[name], denied[name], 40, perServer-40)
		}
	}
	if arrived.Load() != int64(total) {
		t.Errorf("the host was asked %d times for %d passes", arrived.Load(), total)
	}
	for _, s := range sessions {
		checkWire(t, ctx, s)
	}
}

// startBudgetReplicas starts the replicas with servers load0… each with
// an hourly token budget.
func startBudgetReplicas(t *testing.T, storeURL string, servers, budget int) []*replica {
	t.Helper()
	var section strings.Builder
	for i := range servers {
		section.WriteString(peerServer(fmt.Sprintf("load%d", i), 1000))
		fmt.Fprintf(&section, "    env: {%s: \"1\"}\n    budget: {hourly_tokens: %d}\n", peer.LoadEnv, budget)
	}
	rs := make([]*replica, replicaCount)
	for i := range rs {
		cfg := testConfig(t, repoPath(t, "policies"), time.Minute, section.String())
		appendConfig(t, cfg, unlimited+fmt.Sprintf("store:\n  url: %q\n", storeURL))
		rs[i] = &replica{index: i, cfg: cfg, dir: filepath.Dir(cfg)}
		rs[i].httpServe = startHTTPServe(t, cfg)
	}
	return rs
}

// waitDecided waits until the replicas' decision logs hold n request-stage
// decisions, and returns how long that took.
func waitDecided(t *testing.T, rs []*replica, n int) time.Duration {
	t.Helper()
	start := time.Now()
	for deadline := start.Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got := 0
		for _, r := range rs {
			b, _ := os.ReadFile(filepath.Join(r.dir, "decisions.jsonl"))
			for line := range bytes.Lines(b) {
				var d loadDecision
				if json.Unmarshal(line, &d) == nil && d.Input.Stage == "request" {
					got++
				}
			}
		}
		if got >= n {
			return time.Since(start)
		}
	}
	t.Fatalf("fewer than %d requests decided after a minute", n)
	return 0
}
