package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// replicaCount is how many `serve --http` share the store in these tests.
const replicaCount = 3

// replicaLoad is how many sampling requests TestReplicasLoad sends at
// once: 1,000, or MCPXFW_REPLICA_LOAD.
func replicaLoad(t *testing.T) int {
	t.Helper()
	v := os.Getenv("MCPXFW_REPLICA_LOAD")
	if v == "" {
		return 1000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 100 {
		t.Fatalf("MCPXFW_REPLICA_LOAD=%q: want a number of requests, at least 100", v)
	}
	return n
}

// TestReplicasLoad: three `serve --http` replicas on one PostgreSQL store
// and one seal key, behind a round-robin front that keeps session
// affinity, take 1,000 concurrent sampling requests: 600 from legacy
// hosts (each host's session, and its upstreams, on the replica that
// created it; the upstream pushes), 400 from 2026-07-28 hosts (no
// session: each call and each retry goes to the next replica, so a round
// the firewall handed out on one replica is resumed on another). The mix
// of verdicts is the load's: permit, policy deny, structurally invalid,
// escalation approved and escalation rejected. The escalations are decided
// by `mcpx-fw review approve|reject` subprocesses, each run against the
// config of one replica in turn, never necessarily the replica that holds
// the request.
//
// Then, across the replicas: every request got exactly one answer, the
// one its verdict calls for (for a legacy one, read on its upstream's
// wire); the host was asked exactly once for each that passed; the
// replicas' decision logs together hold exactly one decision per request
// and stage (plus one re-decision per approval), and the store holds each
// of them with the same outcome; every escalation has
// exactly one review item and its audit trail; the shared audit chain
// verifies (`mcpx-fw audit --verify`); no replica logged an error.
func TestReplicasLoad(t *testing.T) {
	total := replicaLoad(t)
	storeURL := newDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	rs := startReplicas(t, replicaCount, storeURL, 10*time.Minute, sharedSealKey(t))
	f := newFront(t, rs)
	run := newLoadRun()
	sessions := connectLegacyHosts(t, ctx, f, run, 5)
	modern := connectModernHosts(t, ctx, f, run, 2, len(sessions))
	st := openURLStore(t, storeURL)

	var cfgs []string
	for _, r := range rs {
		cfgs = append(cfgs, r.cfg)
	}
	op := newCLIOperator(st, cfgs, run.decideByKind)
	opCtx, stopOperator := context.WithCancel(ctx)
	operated := op.operate(opCtx, cancel)

	// Three in five requests come from legacy hosts, two in five from
	// 2026-07-28 hosts, all at once.
	per, perModern := total*3/5/len(sessions), total*2/5/len(modern)
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { run.round(t, ctx, sessions, per) })
	wg.Go(func() { run.roundModern(t, ctx, modern, perModern) })
	wg.Wait()
	took := time.Since(start)
	stopOperator()
	if err := <-operated; err != nil {
		t.Error(err)
	}
	if t.Failed() {
		replicaLogs(t, rs)
		t.FailNow()
	}
	t.Logf("%d requests (%d legacy sessions × %d, %d 2026-07-28 sessions × %d) answered by %d replicas in %v; %d decided by %d CLI runs; legacy sessions per replica %v, requests routed %v",
		per*len(sessions)+perModern*len(modern), len(sessions), per, len(modern), perModern, len(rs), took.Round(time.Millisecond),
		len(op.handled), op.runs.Load(), f.sessionsOn(), f.routedCounts())

	t.Logf("2026-07-28 retries resumed on the replica that handed out their state: %d; on another: %d", f.resumedSame.Load(), f.resumedElsewhere.Load())
	if f.resumedElsewhere.Load() == 0 {
		t.Error("no 2026-07-28 retry reached a replica other than the one that handed out its state")
	}
	for _, s := range sessions {
		checkWire(t, ctx, s)
	}
	run.checkOutcomes(t)
	merged := mergeDecisionLogs(t, rs)
	first := run.checkDecisionLog(t, merged)
	checkCommitted(t, ctx, st, decisionsByRequest(t, merged), "by the replicas")
	run.checkReviews(t, ctx, st, rs[0].cfg, first)
	for _, r := range rs {
		checkServeLog(t, filepath.Join(r.dir, "serve.log"))
	}
}

// sharedSealKey writes the one seal key every replica names
// (seal.key_file), so a 2026-07-28 host's retry may land on any of them,
// and returns the config section that names it.
func sharedSealKey(t *testing.T) string {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	path := filepath.Join(t.TempDir(), "seal.key")
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("seal:\n  key_file: %q\n", path)
}

// connectLegacyHosts connects n 2025-11-25 hosts through the front (the
// front spreads their sessions over the replicas) and returns one load
// session per host and server.
func connectLegacyHosts(t *testing.T, ctx context.Context, f *front, run *loadRun, n int) []*loadSession {
	t.Helper()
	sessions, _ := connectLegacyHostsOn(t, ctx, f, run, n)
	return sessions
}

// connectLegacyHostsOn is connectLegacyHosts that also says which replica
// holds each session (by the session's index).
func connectLegacyHostsOn(t *testing.T, ctx context.Context, f *front, run *loadRun, n int) ([]*loadSession, []int) {
	t.Helper()
	var sessions []*loadSession
	var on []int
	for range n {
		before := f.sessionReplicas()
		h, err := peer.ConnectHTTP(ctx, f.URL(), peer.HostOptions{Answer: run.answer, Tools: true})
		if err != nil {
			t.Fatalf("connect a host through the front: %v", err)
		}
		t.Cleanup(func() { _ = h.Close() })
		replica := -1
		for sid, i := range f.sessionReplicas() {
			if _, old := before[sid]; !old {
				replica = i
			}
		}
		if replica < 0 {
			t.Fatal("the front saw no new session for a host")
		}
		for i := range 2 {
			sessions = append(sessions, &loadSession{index: len(sessions), host: h.Host, server: fmt.Sprintf("load%d", i)})
			on = append(on, replica)
		}
	}
	return sessions, on
}

// mergeDecisionLogs writes every replica's decision log into one file, in
// replica order, for the checks of one firewall.
func mergeDecisionLogs(t *testing.T, rs []*replica) string {
	t.Helper()
	var all []byte
	for _, r := range rs {
		b, err := os.ReadFile(filepath.Join(r.dir, "decisions.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	p := filepath.Join(t.TempDir(), "decisions.jsonl")
	if err := os.WriteFile(p, all, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// replicaLogs shows what each replica wrote on stderr, for a failed test.
func replicaLogs(t *testing.T, rs []*replica) {
	t.Helper()
	for _, r := range rs {
		t.Logf("replica %d stderr:\n%s", r.index, r.output())
	}
}

// TestReplicaFreshStateDir: a replica on PostgreSQL keeps nothing of the
// queue in its state dir, so nothing else made the dir before the
// decision log's salt was written there: serve and check failed to start
// ("decision log salt: open …/.salt-…: no such file or directory"). Both
// now start on a state dir that does not exist yet, and make it.
func TestReplicaFreshStateDir(t *testing.T) {
	storeURL := newDatabase(t)
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	appendConfig(t, cfg, fmt.Sprintf("store:\n  url: %q\n", storeURL))
	if res := runCLI(t, "check", "--config", cfg); res.code != 0 {
		t.Fatalf("check with a fresh state dir: exit %d: %s", res.code, res.stderr)
	}
	h := startFirewall(t, cfg, answerWith(hostAnswer))
	out, err := h.Sample(t.Context(), json.RawMessage(plainRequest))
	if err != nil || out.Error != nil {
		t.Fatalf("sample through serve with a fresh state dir: %+v, %v", out, err)
	}
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(c.StateDir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir %s: %v, %v; want a dir, mode 0700", c.StateDir, fi, err)
	}
}
