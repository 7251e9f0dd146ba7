package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestReplicasPostgresRestart: PostgreSQL stops at once (every connection
// cut, as in a crash) and starts again while three replicas carry traffic
// and hold escalations for review.
//
// While it is down, every replica fails closed: a permitted request is
// not answered by the host, since its decision cannot be recorded
// (-32603); an escalation is refused at once (-32603), not left to its
// timeout; a deny stays a refusal and an invalid request -32602; a
// request that passed before and whose completion cannot be recorded is
// withheld (-32603), although the host answered it. `mcpx-fw check` says,
// in one line naming store.url, that the store cannot be reached. Once it
// is back, the replicas reconnect by themselves and pass permitted
// requests again.
//
// Nothing is lost: every decision committed before the stop is still in
// the store; an escalation held across the restart and approved from the
// CLI afterwards is delivered exactly once, or, if its request failed
// during the outage, its review is closed so nobody approves what cannot
// be delivered; every request got exactly one answer on its upstream's
// wire; the host was asked only for requests whose pass the store holds,
// and every completion delivered has its result-stage pass there too; the
// audit chain verifies.
func TestReplicasPostgresRestart(t *testing.T) {
	pg := sharedCluster(t)
	storeURL := newDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	rs := startReplicas(t, replicaCount, storeURL, 10*time.Minute, "")
	f := newFront(t, rs)
	run := newLoadRun()
	sessions := connectLegacyHosts(t, ctx, f, run, replicaCount)
	st := openURLStore(t, storeURL)
	permit, deny, invalid, approve := kindNamed(t, "permit"), kindNamed(t, "deny"), kindNamed(t, "invalid"), kindNamed(t, "approve")
	defer func() {
		if t.Failed() {
			replicaLogs(t, rs)
		}
	}()

	settled := run.send(t, ctx, sessions, []*loadKind{permit, deny, invalid})
	heldDone := make(chan []*loadRequest, 1)
	go func() { heldDone <- run.send(t, ctx, sessions, []*loadKind{approve}) }()
	pending := waitPendingN(t, ctx, st, len(sessions))
	committed := decisionsByRequest(t, mergeDecisionLogs(t, rs))

	stopTraffic := run.stream(t, ctx, sessions, []*loadKind{permit, deny, invalid})
	if err := pg.StopServer(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	down := run.send(t, ctx, sessions, []*loadKind{permit, approve, deny, invalid})
	if res := runCLI(t, "check", "--config", rs[0].cfg); res.code != 1 || !oneLine(res.stderr) || !strings.Contains(res.stderr, "store.url") {
		t.Errorf("check while PostgreSQL is down: exit %d, %q; want 1 and one line naming store.url", res.code, res.stderr)
	}
	downFor := time.Since(stopped)
	if err := pg.StartServer(); err != nil {
		t.Fatal(err)
	}
	recovered := waitRecovered(t, ctx, run, sessions, permit)
	streamed := stopTraffic()
	// The checks read through a store opened now: one opened before holds
	// connections the restart cut, and a read (List) on such a connection
	// fails once ("write: broken pipe"); only a write's BEGIN retries.
	st = openURLStore(t, storeURL)
	t.Logf("PostgreSQL down %v; permitted requests passed again %v after its start; %d requests in flight across the restart",
		downFor.Round(time.Millisecond), recovered.Round(time.Millisecond), len(streamed))

	for i, id := range pending {
		res := runCLI(t, "review", "approve", id, "--config", rs[(i+1)%len(rs)].cfg)
		if res.code != 0 && (res.code != 1 || !strings.Contains(res.stderr, "abandoned")) {
			t.Errorf("approve %s after the restart: exit %d: %s; want it approved, or refused as abandoned", id, res.code, res.stderr)
		}
	}
	held := <-heldDone

	checkExactly(t, run, settled, "before the stop")
	checkHeld(t, ctx, st, run, held)
	checkFailedClosed(t, run, down)
	checkDeliveredOnce(t, run)
	decisions := decisionsByRequest(t, mergeDecisionLogs(t, rs))
	checkCommitted(t, ctx, st, committed, "before the stop")
	checkRecorded(t, ctx, st, run, decisions)
	for _, s := range sessions {
		checkWire(t, ctx, s)
	}
	if res := runCLI(t, "audit", "--verify", "--config", rs[0].cfg); res.code != 0 {
		t.Errorf("mcpx-fw audit --verify: exit %d: %s", res.code, res.stderr)
	}
}

// waitPendingN waits until n reviews are pending in st and returns their
// ids.
func waitPendingN(t *testing.T, ctx context.Context, st *review.Store, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		items, err := st.List(ctx, review.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) >= n {
			var ids []string
			for _, it := range items {
				ids = append(ids, it.ID)
			}
			return ids
		}
	}
	t.Fatalf("fewer than %d reviews pending after a minute", n)
	return nil
}

// stream sends one request of each of kinds from every session, batch
// after batch, until the returned func is called; that func returns every
// request sent.
func (r *loadRun) stream(t *testing.T, ctx context.Context, sessions []*loadSession, kinds []*loadKind) func() []*loadRequest {
	stop := make(chan struct{})
	var all []*loadRequest
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			all = append(all, r.send(t, ctx, sessions, kinds)...)
		}
	})
	return func() []*loadRequest {
		close(stop)
		wg.Wait()
		return all
	}
}

// waitRecovered sends a permitted request from every session until each
// passes, and returns how long that took.
func waitRecovered(t *testing.T, ctx context.Context, run *loadRun, sessions []*loadSession, permit *loadKind) time.Duration {
	t.Helper()
	start := time.Now()
	for deadline := start.Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		passed := 0
		for _, q := range run.send(t, ctx, sessions, []*loadKind{permit}) {
			if o := run.outcome(q); o != nil && o.Error == nil {
				passed++
			}
		}
		if passed == len(sessions) {
			return time.Since(start)
		}
	}
	t.Fatal("permitted requests still fail a minute after PostgreSQL started again")
	return 0
}

// checkExactly: each request got the answer its kind calls for.
func checkExactly(t *testing.T, run *loadRun, reqs []*loadRequest, when string) {
	t.Helper()
	errs := &loadErrors{t: t, what: when}
	defer errs.close()
	for _, q := range reqs {
		o := run.outcome(q)
		if o == nil {
			errs.errorf("%s: %s (%s): not exactly one outcome", when, q.id, q.kind.name)
			continue
		}
		if err := loadOutcomeErr(q, *o); err != nil {
			errs.errorf("%s: %s (%s): %v", when, q.id, q.kind.name, err)
		}
	}
}

// checkFailedClosed: with the store down nothing reached the host, a
// permitted request and an escalation failed with -32603 (an escalation at
// once), a deny stayed a refusal, an invalid request -32602.
func checkFailedClosed(t *testing.T, run *loadRun, reqs []*loadRequest) {
	t.Helper()
	errs := &loadErrors{t: t, what: "while PostgreSQL was down"}
	defer errs.close()
	for _, q := range reqs {
		o := run.outcome(q)
		switch {
		case o == nil:
			errs.errorf("while down: %s (%s): not exactly one outcome", q.id, q.kind.name)
		case o.Error == nil:
			errs.errorf("while down: %s (%s): delivered %s; want it refused", q.id, q.kind.name, o.Completion)
		case q.kind.code == 0 || q.kind.first == "escalate":
			if o.Error.Code != -32603 {
				errs.errorf("while down: %s (%s): error %d %q; want -32603", q.id, q.kind.name, o.Error.Code, o.Error.Message)
			}
		case o.Error.Code != q.kind.code && o.Error.Code != -32603:
			errs.errorf("while down: %s (%s): error %d %q; want %d or -32603", q.id, q.kind.name, o.Error.Code, o.Error.Message, q.kind.code)
		}
	}
}

// checkDeliveredOnce: every request of the run got exactly one outcome, a
// refusal its kind allows or -32603 (it met the outage) or the completion
// its kind allows; the host was asked once for each completion, at most
// once for a request that met the outage (its request passed, its
// completion could not be recorded and was withheld), and never for
// anything else.
func checkDeliveredOnce(t *testing.T, run *loadRun) {
	t.Helper()
	errs := &loadErrors{t: t, what: "outcomes"}
	defer errs.close()
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, s := range run.strays {
		errs.errorf("%s", s)
	}
	for _, id := range slices.Sorted(maps.Keys(run.requests)) {
		q := run.requests[id]
		if len(q.got) != 1 {
			errs.errorf("%s (%s): %d outcomes at the upstream, want 1", id, q.kind.name, len(q.got))
			continue
		}
		o := q.got[0]
		want := 0
		switch {
		case o.Error == nil:
			want = 1
			if !q.kind.answered {
				errs.errorf("%s (%s): delivered %s", id, q.kind.name, o.Completion)
			}
			if err := loadOutcomeErr(q, o); err != nil && q.kind.answered {
				errs.errorf("%s (%s): %v", id, q.kind.name, err)
			}
		case o.Error.Code == -32603:
			want = min(run.asked[id], 1)
		default:
			if err := loadOutcomeErr(q, o); err != nil {
				errs.errorf("%s (%s): %v", id, q.kind.name, err)
			}
		}
		if got := run.asked[id]; got != want {
			errs.errorf("%s (%s): the host was asked %d times, want %d", id, q.kind.name, got, want)
		}
	}
}

// decisionsByRequest reads a decision log and groups its decisions by the
// load request they are for.
func decisionsByRequest(t *testing.T, path string) map[string][]loadDecision {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]loadDecision{}
	for line := range bytes.Lines(b) {
		var d loadDecision
		var raw struct {
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(line, &d); err != nil || json.Unmarshal(line, &raw) != nil {
			t.Errorf("%s: %v: %.200s", filepath.Base(path), err, line)
			continue
		}
		d.raw = string(line)
		id := string(loadIDPattern.Find(raw.Input))
		out[id] = append(out[id], d)
	}
	return out
}

// checkCommitted: every decision logged (before the stop, say) is in the
// store, as it was.
func checkCommitted(t *testing.T, ctx context.Context, st *review.Store, committed map[string][]loadDecision, when string) {
	t.Helper()
	errs := &loadErrors{t: t, what: "logged " + when}
	defer errs.close()
	n := 0
	for id, ds := range committed {
		for _, d := range ds {
			n++
			got, err := st.Decision(ctx, d.DecisionID)
			if err != nil || got.Outcome != d.Result.Outcome {
				errs.errorf("%s: decision %s (%s) logged %s: in the store %q, %v", id, d.DecisionID, d.Result.Outcome, when, got.Outcome, err)
			}
		}
	}
	if n == 0 {
		t.Errorf("no decision was logged %s", when)
	}
}

// checkRecorded: every request the host was asked went through a pass
// the store holds at the request stage, and every completion an upstream
// got through one at the result stage too.
func checkRecorded(t *testing.T, ctx context.Context, st *review.Store, run *loadRun, decisions map[string][]loadDecision) {
	t.Helper()
	errs := &loadErrors{t: t, what: "delivered but not recorded"}
	defer errs.close()
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(run.requests)) {
		q := run.requests[id]
		if len(q.got) != 1 || run.asked[id] == 0 {
			continue
		}
		delivered := q.got[0].Error == nil
		stages := map[string]bool{}
		for _, d := range decisions[id] {
			if d.Result.Outcome != "pass" {
				continue
			}
			if got, err := st.Decision(ctx, d.DecisionID); err != nil || got.Outcome != "pass" {
				errs.errorf("%s (%s) was delivered; its %s decision %s is not in the store (%q, %v)", id, q.kind.name, d.Input.Stage, d.DecisionID, got.Outcome, err)
				continue
			}
			stages[d.Input.Stage] = true
		}
		switch {
		case !stages["request"]:
			errs.errorf("%s (%s): the host was asked with recorded passes at stages %v; want request", id, q.kind.name, slices.Sorted(maps.Keys(stages)))
		case delivered && !stages["result"]:
			errs.errorf("%s (%s) was delivered with recorded passes at stages %v; want request and result", id, q.kind.name, slices.Sorted(maps.Keys(stages)))
		}
	}
}

// checkHeld: an escalation held across the restart was delivered once
// approved, its review delivered; or its request failed with -32603 and
// its review was closed without delivery. A review left open (pending, or
// approved with nobody waiting) would be approved for nothing: the
// operator is told the host's model will answer it, and it never ends.
func checkHeld(t *testing.T, ctx context.Context, st *review.Store, run *loadRun, held []*loadRequest) {
	t.Helper()
	items, err := st.List(ctx, review.Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	byReq := map[string]review.Item{}
	for _, it := range items {
		byReq[string(loadIDPattern.Find(it.Request))] = it
	}
	delivered := 0
	for _, q := range held {
		o, it := run.outcome(q), byReq[q.id]
		if o != nil && o.Error == nil {
			delivered++
		}
		switch {
		case o == nil:
			t.Errorf("held %s: not exactly one outcome", q.id)
		case o.Error == nil:
			if err := loadOutcomeErr(q, *o); err != nil || it.State != review.StateDelivered {
				t.Errorf("held %s: %v; review %s is %s, want delivered", q.id, err, it.ID, it.State)
			}
		case o.Error.Code != -32603:
			t.Errorf("held %s: error %d %q; want the completion, or -32603", q.id, o.Error.Code, o.Error.Message)
		case it.State == review.StatePending || it.State == review.StateApproved:
			t.Errorf("held %s: the upstream got %d %q, and its review %s is left %s", q.id, o.Error.Code, o.Error.Message, it.ID, it.State)
		case it.State == review.StateDelivered:
			t.Errorf("held %s: review %s is delivered, but the upstream got %d %q", q.id, it.ID, o.Error.Code, o.Error.Message)
		}
	}
	t.Logf("of %d requests held for review across the restart, %d were delivered once approved", len(held), delivered)
}
