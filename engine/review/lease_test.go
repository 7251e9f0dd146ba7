package review

import (
	"errors"
	"testing"
	"time"
)

// crash stops a replica's heartbeat without releasing its lease, as kill
// -9 would, and, so the test need not wait the lease out, moves the
// lease's expiry into the past as the database's clock would.
func crash(t *testing.T, dir string, s *Store) {
	t.Helper()
	s.heartbeatStop()
	if _, err := rawDB(t, dir).Exec(`UPDATE leases SET expires_at = clock_timestamp() - interval '1 second'
		WHERE id = ?`, s.owner); err != nil {
		t.Fatal(err)
	}
}

// TestDeadReplicaAbandonedByLease: two replicas share the queue and one
// crashes. The other abandons the crashed one's pending items and fails
// its approved one, each once, with a history row and an audit entry, and
// never touches its own; what was abandoned cannot be approved later.
func TestDeadReplicaAbandonedByLease(t *testing.T) {
	postgresOnly(t, "leases are how replicas on one database own their waits")
	dir := stateDir(t)
	dead, live := openReplica(t, dir, DefaultLease), openReplica(t, dir, DefaultLease)
	live.heartbeatStop() // only this test's AbandonOrphans sweeps; the lease holds long enough
	a := mustAdd(t, dead, sampleItem("a"), time.Hour)
	b := mustAdd(t, dead, sampleItem("a"), time.Hour)
	if _, err := live.Approve(t.Context(), b.ID, "alice", ""); err != nil {
		t.Fatal(err)
	}
	mine := mustAdd(t, live, sampleItem("a"), time.Hour)

	if n, err := live.AbandonOrphans(t.Context()); err != nil || n != 0 {
		t.Fatalf("AbandonOrphans while both replicas live = %d, %v; want 0", n, err)
	}
	crash(t, dir, dead)
	if n, err := live.AbandonOrphans(t.Context()); err != nil || n != 2 {
		t.Fatalf("AbandonOrphans after the crash = %d, %v; want 2 (one abandoned, one failed)", n, err)
	}
	if n, err := live.AbandonOrphans(t.Context()); err != nil || n != 0 {
		t.Fatalf("AbandonOrphans again = %d, %v; want 0: each item closes once", n, err)
	}
	for _, tc := range []struct {
		id   string
		want State
		note string
		rows int
	}{
		{a.ID, StateAbandoned, NoteOwnerGone, 2},
		{b.ID, StateFailed, NoteUndelivered, 3},
		{mine.ID, StatePending, "", 1},
	} {
		got := mustGet(t, live, tc.id)
		if got.State != tc.want || noteOf(got) != tc.note {
			t.Errorf("%s: %s %q; want %s %q", tc.id, got.State, noteOf(got), tc.want, tc.note)
		}
		hist, err := live.History(t.Context(), tc.id)
		if err != nil || len(hist) != tc.rows {
			t.Errorf("%s: %d history rows, %v; want %d", tc.id, len(hist), err, tc.rows)
		}
		entries, err := live.Audit(t.Context(), AuditFilter{ItemID: tc.id})
		if err != nil || len(entries) != tc.rows {
			t.Errorf("%s: %d audit entries, %v; want %d", tc.id, len(entries), err, tc.rows)
		}
	}
	var decided *DecidedError
	if _, err := live.Approve(t.Context(), a.ID, "alice", ""); !errors.As(err, &decided) {
		t.Errorf("Approve of an abandoned item: %v; want a DecidedError", err)
	}
	if _, err := live.Finish(t.Context(), b.ID, StateDelivered, ""); !errors.As(err, &decided) {
		t.Errorf("Finish of a failed item: %v; want a DecidedError", err)
	}
	var leases int
	if err := rawDB(t, dir).QueryRow("SELECT count(*) FROM leases WHERE id = ?", dead.owner).Scan(&leases); err != nil || leases != 0 {
		t.Errorf("the dead lease is still there (%d rows, %v) though it owns nothing open", leases, err)
	}
	if _, _, err := live.VerifyAudit(t.Context()); err != nil {
		t.Error(err)
	}
}

// TestHeartbeatSweepsDeadLeases: nobody calls AbandonOrphans; a replica's
// heartbeat finds the crashed one's lease run out and abandons its item by
// itself, while the live replica's own item stays pending.
func TestHeartbeatSweepsDeadLeases(t *testing.T) {
	postgresOnly(t, "leases are how replicas on one database own their waits")
	dir := stateDir(t)
	const lease = 300 * time.Millisecond
	dead, live := openReplica(t, dir, lease), openReplica(t, dir, lease)
	it := mustAdd(t, dead, sampleItem("a"), time.Hour)
	mine := mustAdd(t, live, sampleItem("a"), time.Hour)
	dead.heartbeatStop() // crashed: its lease runs out on its own

	db := rawDB(t, dir)
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	deadline := time.After(wakeDeadline)
	state := func(id string) State {
		var st State
		if err := db.QueryRow("SELECT state FROM items WHERE id = ?", id).Scan(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	for state(it.ID) == StatePending {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the dead replica's item is still pending: no heartbeat swept it")
		}
	}
	if got := state(it.ID); got != StateAbandoned {
		t.Errorf("the dead replica's item is %s; want abandoned", got)
	}
	if got := state(mine.ID); got != StatePending {
		t.Errorf("the live replica's item is %s; want pending", got)
	}
}
