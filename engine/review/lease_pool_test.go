package review

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestSweepNeedsNoSecondConnection: a replica's sweep holds the store-wide
// write lock while it asks whether each item's lease still holds, and
// every other connection of its pool is taken by charges that open
// reviews, each waiting for that same lock (a burst of escalations to as
// many servers). The lease must be read without asking the pool for
// another connection: none will come free until the sweep commits, so
// the sweep would wait out its read, take the dead replica for alive and
// leave its item pending, with every replica's writes stalled behind it.
func TestSweepNeedsNoSecondConnection(t *testing.T) {
	postgresOnly(t, "leases are how replicas on one database own their waits")
	dir := stateDir(t)
	live := openReplica(t, dir, DefaultLease)
	live.heartbeatStop() // only this test sweeps; the lease holds long enough
	dead := openReplica(t, dir, DefaultLease)
	orphan := mustAdd(t, dead, sampleItem("x"), time.Hour)
	crash(t, dir, dead)
	r, err := live.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}

	db := rawDB(t, dir)
	tx := holdWriteLock(t, db)
	waitersAtLeast := func(n int) {
		t.Helper()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(wakeDeadline)
		for {
			var waiting int
			if err := db.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			if waiting >= n {
				return
			}
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("%d transactions wait for the write lock; want %d", waiting, n)
			}
		}
	}

	type swept struct {
		n   int
		err error
	}
	sweep := make(chan swept, 1)
	go func() {
		n, err := live.AbandonOrphans(t.Context())
		sweep <- swept{n, err}
	}()
	waitersAtLeast(1) // the sweep holds a connection and waits for the lock
	pool := live.db.Stats().MaxOpenConnections
	var wg sync.WaitGroup
	for i := range pool {
		wg.Go(func() {
			server := fmt.Sprintf("s%d", i)
			var outcome string
			if _, err := r.Charge(t.Context(), server, budgetDecide("dc-"+server, server, 0, 1<<40, 1, &outcome)); err != nil {
				t.Errorf("Charge(%s): %v", server, err)
			}
		})
	}
	waitersAtLeast(pool) // the sweep and pool-1 charges, the last charge waits for a connection
	tx.Rollback()

	got := <-sweep
	wg.Wait()
	if got.err != nil || got.n != 1 {
		t.Errorf("AbandonOrphans = %d, %v; want 1", got.n, got.err)
	}
	if it := mustGet(t, live, orphan.ID); it.State != StateAbandoned {
		t.Errorf("the dead replica's item is %s; want abandoned", it.State)
	}
}

// TestLeaseRenewedWhilePoolBusy: every connection of a replica's pool is
// taken by charges waiting for the store-wide write lock (a burst of
// escalations while another replica's long write holds the lock), and
// more wait for a connection. The heartbeat must go on renewing the
// lease: a renewal queued behind the pool times out, the lease runs out,
// and the other replicas abandon the reviews of a replica that is alive.
func TestLeaseRenewedWhilePoolBusy(t *testing.T) {
	postgresOnly(t, "leases are how replicas on one database own their waits")
	dir := stateDir(t)
	const lease = 600 * time.Millisecond
	live := openReplica(t, dir, lease)
	r, err := live.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}

	db := rawDB(t, dir)
	tx := holdWriteLock(t, db)
	pool := live.db.Stats().MaxOpenConnections
	var wg sync.WaitGroup
	defer wg.Wait()
	defer tx.Rollback() // lets the charges through
	for i := range pool + 2 {
		wg.Go(func() {
			server := fmt.Sprintf("s%d", i)
			var outcome string
			if _, err := r.Charge(t.Context(), server, budgetDecide("dc-"+server, server, 0, 1<<40, 1, &outcome)); err != nil {
				t.Errorf("Charge(%s): %v", server, err)
			}
		})
	}
	var mark time.Time // the database's clock, two leases from now
	if err := db.QueryRow("SELECT clock_timestamp() + make_interval(secs => $1)", 2*lease.Seconds()).Scan(&mark); err != nil {
		t.Fatal(err)
	}

	tick := time.NewTicker(lease / 6)
	defer tick.Stop()
	deadline := time.After(wakeDeadline)
	for {
		expires, ranOut, waiting := leaseSeen(t, db, live.owner)
		switch {
		case ranOut:
			t.Fatalf("the live replica's lease ran out while its pool was busy (%d charges waiting for the lock, pool %d)", waiting, pool)
		case waiting >= pool && expires.After(mark):
			return // renewed past two leases with every pooled connection waiting
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("neither renewed past %s nor run out (%d charges waiting for the lock, pool %d)", mark, waiting, pool)
		}
	}
}
