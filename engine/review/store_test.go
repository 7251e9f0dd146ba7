package review

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestOpenMakesPrivateFilesInWALMode(t *testing.T) {
	sqliteOnly(t, "the queue's file, its mode and pragmas")
	dir := filepath.Join(stateDir(t), "nested")
	s := openStore(t, dir)
	mustAdd(t, s, sampleItem("everything"), time.Minute) // makes the -wal and -shm files

	wantMode(t, dir, 0o700)
	for _, name := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
		wantMode(t, filepath.Join(dir, name), 0o600)
	}
	for pragma, want := range map[string]string{
		"journal_mode": "wal",
		"busy_timeout": "5000",
		"user_version": strconv.Itoa(len(migrations)),
		"synchronous":  "1", // NORMAL
	} {
		var got string
		if err := s.db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %q, want %q", pragma, got, want)
		}
	}
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %#o, want %#o", filepath.Base(path), got, want)
	}
}

func TestOpenRefusesSharedDirOrFile(t *testing.T) {
	t.Run("dir", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		wantOpenError(t, dir, "accessible by group or others (mode 0750)")
	})
	t.Run("file", func(t *testing.T) {
		dir := stateDir(t)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, FileName), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, FileName), 0o644); err != nil {
			t.Fatal(err)
		}
		wantOpenError(t, dir, "review store "+filepath.Join(dir, FileName)+" is accessible")
	})
}

func wantOpenError(t *testing.T, dir, want string) {
	t.Helper()
	s, err := Open(dir, nil)
	if err == nil {
		s.Close()
		t.Fatalf("Open(%s) succeeded, want an error containing %q", dir, want)
	}
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "chmod go-rwx") {
		t.Errorf("Open error %q, want it to contain %q and the chmod to run", err, want)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	dir := stateDir(t)
	s := openStore(t, dir)
	q := "PRAGMA user_version = 99"
	if onPostgres() {
		q = "UPDATE schema_version SET version = 99"
	}
	if _, err := s.db.Exec(q); err != nil {
		t.Fatal(err)
	}
	s.Close()
	wantErr := "schema version 99 is newer"
	if s, err := openBackend(dir, nil); err == nil || !strings.Contains(err.Error(), wantErr) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("Open on a newer schema: %v, want %q", err, wantErr)
	}
}

// TestReopenKeepsItemsAndSchema: the items outlive the Store. On SQLite
// this process still owns the item it opened; on PostgreSQL Close released
// the lease that owned it, so it is abandoned (lease.go).
func TestReopenKeepsItemsAndSchema(t *testing.T) {
	dir := stateDir(t)
	s := openStore(t, dir)
	a := mustAdd(t, s, sampleItem("everything"), time.Hour)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := StatePending
	if onPostgres() {
		want = StateAbandoned
	}
	s2 := openStore(t, dir)
	if got := mustGet(t, s2, a.ID); got.ID != a.ID || got.State != want {
		t.Errorf("after reopen: %+v, want %s %s", got, want, a.ID)
	}
}

// TestDatabaseRefusesIllegalMoves guards the triggers: even SQL written by
// hand cannot reopen a decided item or rewrite its history.
func TestDatabaseRefusesIllegalMoves(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := mustAdd(t, s, sampleItem("everything"), time.Hour)
	if _, err := s.Approve(t.Context(), it.ID, "alice", ""); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"UPDATE items SET state = 'pending' WHERE id = ?",
		"UPDATE items SET state = 'rejected' WHERE id = ?",
		"UPDATE history SET actor = 'mallory' WHERE item_id = ?",
		"DELETE FROM history WHERE item_id = ?",
	} {
		if _, err := s.db.Exec(q, it.ID); err == nil {
			t.Errorf("%s: succeeded, want the database to refuse", q)
		}
	}
	if got := mustGet(t, s, it.ID); got.State != StateApproved || got.DecidedBy != "alice" {
		t.Errorf("item after refused writes: %s by %q", got.State, got.DecidedBy)
	}
}

// TestOpenWaitsForAnotherFirstOpen: a process that opens a new store while
// another holds its write lock (making the same new store: serve and
// `mcpx-fw review list` started together, or a host that starts serve
// twice to probe it) waits for it instead of failing at once. Turning a
// new database to WAL upgrades a read lock, and SQLite refuses that
// without its busy timeout while another connection holds the write lock.
func TestOpenWaitsForAnotherFirstOpen(t *testing.T) {
	dir := stateDir(t)
	path, err := prepareFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin() // the other process's write lock on the new store
	if err != nil {
		t.Fatal(err)
	}
	release := time.AfterFunc(200*time.Millisecond, func() { _ = tx.Rollback() })
	defer release.Stop()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("Open while another process held the new store's write lock: %v", err)
	}
	s.Close()
}
