package review

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestPendingSummary counts pending reviews by server and stage, with the
// oldest's time, and leaves decided ones out.
func TestPendingSummary(t *testing.T) {
	s := openStore(t, stateDir(t))
	first := mustAdd(t, s, sampleItem("alpha"), time.Hour)
	mustAdd(t, s, sampleItem("alpha"), time.Hour)
	result := sampleItem("alpha")
	result.Stage = StageResult
	result.Result = json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`)
	mustAdd(t, s, result, time.Hour)
	decided := mustAdd(t, s, sampleItem("beta"), time.Hour)
	mustAdd(t, s, sampleItem("beta"), time.Hour)
	if _, err := s.Reject(t.Context(), decided.ID, "op", "no"); err != nil {
		t.Fatalf("Reject: %v", err)
	}
	got, err := s.PendingSummary(t.Context())
	if err != nil {
		t.Fatalf("PendingSummary: %v", err)
	}
	want := []Pending{{"alpha", "request", 2, first.CreatedAt}, {"alpha", "result", 1, time.Time{}}, {"beta", "request", 1, time.Time{}}}
	if len(got) != len(want) {
		t.Fatalf("PendingSummary = %+v, want %d rows", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Server != w.Server || g.Stage != w.Stage || g.Count != w.Count {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
		if !w.Oldest.IsZero() && !g.Oldest.Equal(w.Oldest) {
			t.Errorf("row %d oldest = %v, want %v", i, g.Oldest, w.Oldest)
		}
	}
}

// TestWritable: an open store takes writes; a closed one is reported, not
// hung on.
func TestWritable(t *testing.T) {
	s := openStore(t, stateDir(t))
	if err := s.Writable(t.Context()); err != nil {
		t.Fatalf("Writable on an open store: %v", err)
	}
	s.Close()
	if err := s.Writable(t.Context()); err == nil {
		t.Fatal("Writable on a closed store: nil error")
	}
}

// TestWritableLocked: on SQLite, another process holding the write lock
// past the probe's deadline makes the store unwritable for that long.
func TestWritableLocked(t *testing.T) {
	sqliteOnly(t, "the file's write lock")
	dir := stateDir(t)
	s, other := openStore(t, dir), openStore(t, dir)
	tx, err := other.db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := tx.ExecContext(t.Context(), "UPDATE items SET note = note WHERE id = ''"); err != nil {
		t.Fatalf("hold the write lock: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := s.Writable(ctx); err == nil {
		t.Error("Writable while another store holds the write lock: nil error")
	}
	_ = tx.Rollback()
	if err := s.Writable(t.Context()); err != nil {
		t.Errorf("Writable after the lock is released: %v", err)
	}
}
