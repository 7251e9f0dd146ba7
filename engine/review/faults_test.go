package review

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLockHeldElsewhereIsNamed: while another connection holds the write
// lock (as `sqlite3 reviews.db` with an open BEGIN IMMEDIATE would), a write
// gives up when its deadline comes and says the store is locked, instead
// of "context deadline exceeded"; nothing is written, and the queue works
// once the lock is released.
func TestLockHeldElsewhereIsNamed(t *testing.T) {
	sqliteOnly(t, "SQLite's file lock")
	dir := stateDir(t)
	s := openStore(t, dir)
	other, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = s.Add(ctx, sampleItem("everything"), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "is locked") || !strings.Contains(err.Error(), "database is locked") {
		t.Fatalf("Add under another connection's lock: %v; want it named as locked", err)
	}
	_ = tx.Rollback()
	if items, err := s.List(t.Context(), Filter{All: true}); err != nil || len(items) != 0 {
		t.Fatalf("after the refused Add: %d items, %v; want none", len(items), err)
	}
	mustAdd(t, s, sampleItem("everything"), time.Minute)
}

// TestUnwritableQueueOpensNoReview: once the queue's files are read-only
// for this account (chmod on the state dir while serve runs), no operator
// could open the queue to decide, so no review is opened; the decision
// itself is still recorded, through the files this Store holds open.
func TestUnwritableQueueOpensNoReview(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("file modes do not bind root (or Windows)")
	}
	dir := stateDir(t)
	s := openStore(t, dir)
	mustAdd(t, s, sampleItem("everything"), time.Minute) // the -wal and -shm files exist now
	files, _ := filepath.Glob(filepath.Join(dir, FileName+"*"))
	chmodAll := func(file, d os.FileMode) {
		for _, f := range files {
			if err := os.Chmod(f, file); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, d); err != nil {
			t.Fatal(err)
		}
	}
	chmodAll(0o400, 0o500)
	t.Cleanup(func() { chmodAll(0o600, 0o700) })

	it := sampleItem("everything")
	_, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-ro1", Server: "everything", Stage: StageRequest, Outcome: "escalate"},
		Review: &it, ReviewTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Fatalf("Commit of an escalation on a read-only queue: %v; want refused as not writable", err)
	}
	if _, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-ro2", Server: "everything", Stage: StageRequest, Outcome: "error"}}); err != nil {
		t.Fatalf("recording the refusal: %v", err)
	}
	if _, err := s.Decision(t.Context(), "dc-ro1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused escalation left a decision: %v", err)
	}
	chmodAll(0o600, 0o700)
	if _, err := s.Decision(t.Context(), "dc-ro2"); err != nil {
		t.Errorf("the refusal's decision: %v", err)
	}
	mustAdd(t, s, sampleItem("everything"), time.Minute)
}

// TestServerClosedConnectionsAreReplaced: the PostgreSQL server ended
// every connection (a restart, a failover, pg_terminate_backend) while the
// Store held them idle. The next writes and reads find new connections:
// no decision fails because the pool still held dead ones.
func TestServerClosedConnectionsAreReplaced(t *testing.T) {
	if !onPostgres() {
		t.Skip("PostgreSQL only: a SQLite file has no server to lose")
	}
	dir := stateDir(t)
	s := openStore(t, dir)
	for range 3 { // leaves a few idle connections in the pool
		mustAdd(t, s, sampleItem("a"), time.Hour)
	}
	admin := rawDB(t, dir)
	terminate := func() {
		t.Helper()
		if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`); err != nil {
			t.Fatal(err)
		}
	}
	terminate()
	it, err := s.Add(t.Context(), sampleItem("a"), time.Hour)
	if err != nil {
		t.Fatalf("Add after the server closed the pool's connections: %v", err)
	}
	terminate()
	if _, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-after", Server: "a", Stage: StageRequest, Outcome: "pass"},
		Usage: Usage{Requests: 1}}); err != nil {
		t.Fatalf("Commit of a decision after the server closed the pool's connections: %v", err)
	}
	terminate()
	if _, err := s.Approve(t.Context(), it.ID, "alice", ""); err != nil {
		t.Fatalf("Approve: %v", err)
	}
	if _, _, err := s.VerifyAudit(t.Context()); err != nil {
		t.Fatal(err)
	}
}
