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
