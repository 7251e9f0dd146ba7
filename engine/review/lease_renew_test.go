package review

import (
	"database/sql"
	"testing"
	"time"
)

// holdWriteLock takes the store-wide write lock (lockWrites) in a
// transaction of its own, as a replica's long write would hold it, until
// the transaction ends (at the latest when the test does).
func holdWriteLock(t *testing.T, db *db) *sql.Tx {
	t.Helper()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	if _, err := tx.Exec("SELECT pg_advisory_xact_lock($1)", int64(writeLockKey)); err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestLeaseRenewedWhileItsSweepWaits: a replica's sweep waits for the
// store-wide write lock (other replicas' writes queue ahead of it under
// load; here a transaction holds the lock for several leases). Its lease
// must go on being renewed meanwhile: a live replica whose lease ran out
// would have its pending reviews abandoned, and its approved ones failed
// while it delivers them, by the other replicas' sweeps.
func TestLeaseRenewedWhileItsSweepWaits(t *testing.T) {
	postgresOnly(t, "leases are how replicas on one database own their waits")
	dir := stateDir(t)
	const lease = 600 * time.Millisecond
	live := openReplica(t, dir, lease)
	mustAdd(t, live, sampleItem("a"), time.Millisecond) // due at once: the sweep has work

	db := rawDB(t, dir)
	tx := holdWriteLock(t, db)
	var mark time.Time // the database's clock, two leases after the lock was taken
	if err := tx.QueryRow("SELECT clock_timestamp() + make_interval(secs => $1)", 2*lease.Seconds()).Scan(&mark); err != nil {
		t.Fatal(err)
	}

	tick := time.NewTicker(lease / 6)
	defer tick.Stop()
	deadline := time.After(wakeDeadline)
	sweepWaited := false
	for {
		expires, ranOut, waiting := leaseSeen(t, db, live.owner)
		sweepWaited = sweepWaited || waiting > 0
		switch {
		case ranOut:
			t.Fatalf("the live replica's lease ran out while its sweep waited for the write lock (sweep seen waiting: %v)", sweepWaited)
		case sweepWaited && expires.After(mark):
			return // renewed past two leases while the sweep waited
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("neither renewed past %s nor run out (sweep seen waiting: %v)", mark, sweepWaited)
		}
	}
}

// leaseSeen reads, on the database's clock, when owner's lease runs out,
// whether it has, and how many advisory locks are being waited for.
func leaseSeen(t *testing.T, d *db, owner string) (expires time.Time, ranOut bool, waiting int) {
	t.Helper()
	if err := d.QueryRow(`SELECT expires_at, expires_at <= clock_timestamp(),
		(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)
		FROM leases WHERE id = $1`, owner).Scan(&expires, &ranOut, &waiting); err != nil {
		t.Fatal(err)
	}
	return expires, ranOut, waiting
}
