package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// replicaLease is the store.lease of the kill test's replicas: short, so
// a killed replica's waits lapse within the test.
const replicaLease = "  lease: 2s\n"

// TestReplicasKill: one of three replicas is killed with SIGKILL while
// every replica holds escalations for review and the others carry traffic.
// The killed replica's reviews end abandoned once its lease lapses (one
// approved right after the kill ends failed), none is ever delivered, and
// approving one afterwards is refused. The other replicas' reviews are
// untouched: approved from the CLI, each is delivered exactly once, and
// their traffic gets the answers its verdicts call for. The audit chain
// verifies.
func TestReplicasKill(t *testing.T) {
	const victim = 0
	storeURL := newDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	rs := startReplicas(t, replicaCount, storeURL, 10*time.Minute, replicaLease)
	f := newFront(t, rs)
	run := newLoadRun()
	sessions, on := connectLegacyHostsOn(t, ctx, f, run, replicaCount)
	st := openURLStore(t, storeURL)
	approve := kindNamed(t, "approve")
	defer func() {
		if t.Failed() {
			replicaLogs(t, rs)
		}
	}()
	var survivors []*loadSession
	for i, s := range sessions {
		if on[i] != victim {
			survivors = append(survivors, s)
		}
	}
	if len(survivors) == len(sessions) {
		t.Fatalf("no session on replica %d (sessions on %v)", victim, on)
	}

	const perSession = 5
	heldDone := make(chan []*loadRequest, 1)
	go func() {
		reqs, _ := run.trySend(ctx, sessions, []*loadKind{approve, approve, approve, approve, approve})
		heldDone <- reqs
	}()
	waitPendingN(t, ctx, st, perSession*len(sessions))
	mine, others := splitPending(t, ctx, st, on, victim)
	stopTraffic := run.stream(t, ctx, survivors, []*loadKind{kindNamed(t, "permit"), kindNamed(t, "deny"), kindNamed(t, "invalid")})

	if err := rs[victim].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	f.remove(victim)
	// One of its reviews is approved before its lease lapses.
	if res := runCLI(t, "review", "approve", mine[0], "--config", rs[1].cfg); res.code != 0 && !strings.Contains(res.stderr, "abandoned") {
		t.Errorf("approve %s, the killed replica's, at once: exit %d: %s", mine[0], res.code, res.stderr)
	}
	for i, id := range others {
		if res := runCLI(t, "review", "approve", id, "--config", rs[1+i%(len(rs)-1)].cfg); res.code != 0 {
			t.Errorf("approve %s, a live replica's: exit %d: %s", id, res.code, res.stderr)
		}
	}
	held := <-heldDone
	streamed := stopTraffic()

	lapsed := waitSettled(t, ctx, st, mine)
	t.Logf("replica %d killed holding %d reviews; all closed %v later; the others' %d delivered; %d requests of traffic on the others meanwhile",
		victim, len(mine), lapsed.Sub(killed).Round(time.Millisecond), len(others), len(streamed))
	for i, id := range mine {
		it, err := st.Get(ctx, id)
		want := review.StateAbandoned
		if i == 0 && it.State == review.StateFailed {
			want = review.StateFailed // approved before it lapsed
		}
		if err != nil || it.State != want {
			t.Errorf("the killed replica's review %s: %s, %v; want %s", id, it.State, err, want)
		}
	}
	if res := runCLI(t, "review", "approve", mine[len(mine)-1], "--config", rs[2].cfg); res.code != 1 || !strings.Contains(res.stderr, "abandoned") {
		t.Errorf("approve %s after its replica's lease lapsed: exit %d, %q; want refused as abandoned", mine[len(mine)-1], res.code, res.stderr)
	}
	for _, id := range others {
		if it, err := st.Get(ctx, id); err != nil || it.State != review.StateDelivered {
			t.Errorf("a live replica's review %s: %s, %v; want delivered", id, it.State, err)
		}
	}
	var heldSurvivors []*loadRequest
	for _, q := range held {
		if on[sessionOf(t, q.id)] != victim {
			heldSurvivors = append(heldSurvivors, q)
		} else if o := run.outcome(q); o != nil && o.Error == nil {
			t.Errorf("%s, held on the killed replica, was delivered: %s", q.id, o.Completion)
		}
	}
	checkExactly(t, run, heldSurvivors, "held on a live replica")
	checkExactly(t, run, streamed, "traffic on the live replicas")
	for _, s := range survivors {
		checkWire(t, ctx, s)
	}
	if res := runCLI(t, "audit", "--verify", "--config", rs[1].cfg); res.code != 0 {
		t.Errorf("mcpx-fw audit --verify: exit %d: %s", res.code, res.stderr)
	}
	for _, r := range rs[1:] {
		checkServeLog(t, r.dir+"/serve.log")
	}
}

// sessionOf reads the session index from a load request's id.
func sessionOf(t *testing.T, id string) int {
	t.Helper()
	parts := strings.Split(id, "-")
	n, err := strconv.Atoi(parts[1])
	if len(parts) != 3 || err != nil {
		t.Fatalf("load request id %q", id)
	}
	return n
}

// splitPending splits the pending reviews into those held by replica
// victim and the others, by the session each request came from.
func splitPending(t *testing.T, ctx context.Context, st *review.Store, on []int, victim int) (mine, others []string) {
	t.Helper()
	items, err := st.List(ctx, review.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if on[sessionOf(t, string(loadIDPattern.Find(it.Request)))] == victim {
			mine = append(mine, it.ID)
		} else {
			others = append(others, it.ID)
		}
	}
	if len(mine) == 0 || len(others) == 0 {
		t.Fatalf("pending reviews: %d on replica %d, %d on the others; want some of each", len(mine), victim, len(others))
	}
	return mine, others
}

// waitSettled waits until every review of ids has ended (a terminal
// state) and returns when that was seen.
func waitSettled(t *testing.T, ctx context.Context, st *review.Store, ids []string) time.Time {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		open := 0
		for _, id := range ids {
			it, err := st.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !it.State.Terminal() {
				open++
			}
		}
		if open == 0 {
			return time.Now()
		}
	}
	t.Fatalf("the killed replica's reviews are still open a minute after the kill")
	return time.Time{}
}
