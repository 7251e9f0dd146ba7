package review

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// marker is prompt text that must leave the file when its item is pruned.
const marker = "zebra-7f3a-prompt-text"

// markedItem's request spills into overflow pages, the ones SQLite would
// free without overwriting.
func markedItem() Item {
	it := sampleItem("alpha")
	text := strings.Repeat("padding ", 2000) + marker + strings.Repeat(" padding", 2000)
	it.Request = json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"` + text + `"}}],"maxTokens":64}`)
	return it
}

// TestPruneErasesFinishedText: text of items finished longer ago than the
// retention is gone from the item and from the file's bytes; open items
// and recent ones keep theirs; the audit chain keeps the digests and
// still verifies.
func TestPruneErasesFinishedText(t *testing.T) {
	sqliteOnly(t, "reads the queue's files for erased text")
	dir := stateDir(t)
	synctest.Test(t, func(t *testing.T) {
		s, ctx := openStore(t, dir), t.Context()
		old := mustAdd(t, s, markedItem(), time.Hour)
		if _, err := s.Reject(ctx, old.ID, "bob", "no"); err != nil {
			t.Fatal(err)
		}
		pending := mustAdd(t, s, markedItem(), 100*time.Hour)
		time.Sleep(48 * time.Hour)
		recent := mustAdd(t, s, markedItem(), time.Hour)
		if _, err := s.Reject(ctx, recent.ID, "bob", "no"); err != nil {
			t.Fatal(err)
		}

		n, err := s.Prune(ctx, 24*time.Hour)
		if err != nil || n != 1 {
			t.Fatalf("Prune = %d, %v; want 1 item erased", n, err)
		}
		if got := mustGet(t, s, old.ID); got.Request != nil || got.ErasedAt.IsZero() || got.State != StateRejected || got.DecidedBy != "bob" {
			t.Errorf("pruned item = %+v; want its text gone and its decision kept", got)
		}
		for _, id := range []string{pending.ID, recent.ID} {
			if got := mustGet(t, s, id); got.Request == nil {
				t.Errorf("%s lost its text", id)
			}
		}
		entries, _ := s.Audit(ctx, AuditFilter{ItemID: old.ID})
		if last := entries[len(entries)-1]; last.Event != EventErased || last.RequestDigest != Digest(old.Request) {
			t.Errorf("last audit entry = %+v; want erased with the request's digest", last)
		}
		if _, _, err := s.VerifyAudit(ctx); err != nil {
			t.Errorf("chain after prune: %v", err)
		}
		if n, _ := s.Prune(ctx, 24*time.Hour); n != 0 {
			t.Errorf("second prune erased %d again", n)
		}
	})
	if n := markerCount(t, dir); n != 2 {
		t.Errorf("the marker text is in the files %d times, want 2 (the two kept items)", n)
	}
}

func TestPruneZeroKeepsEverything(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := mustAdd(t, s, markedItem(), time.Hour)
	if _, err := s.Reject(t.Context(), it.ID, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(t.Context(), 0); n != 0 || err != nil || mustGet(t, s, it.ID).Request == nil {
		t.Errorf("Prune(0) = %d, %v; want nothing erased", n, err)
	}
}

// markerCount counts the marker in the database and its WAL.
func markerCount(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, name := range []string{FileName, FileName + "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte(marker))
	}
	return n
}
