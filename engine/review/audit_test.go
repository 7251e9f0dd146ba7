package review

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAuditOneEntryPerTransition: every transition of every kind is one
// entry, with who, which decision, which policy and what was approved.
func TestAuditOneEntryPerTransition(t *testing.T) {
	s := openStore(t, stateDir(t))
	s.PolicyRevision = func() string { return "rev-1" }
	ctx := t.Context()

	edited := mustAdd(t, s, sampleItem("alpha"), time.Hour)
	newParams := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":64}`)
	if _, err := s.ApproveEdited(ctx, edited.ID, "alice", "", Edit{Value: newParams, Diff: "-hi\n+hello\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(ctx, edited.ID, StateDelivered, "released after approval"); err != nil {
		t.Fatal(err)
	}
	answered := mustAdd(t, s, sampleItem("beta"), time.Hour)
	completion := json.RawMessage(`{"role":"assistant","model":"alice","content":{"type":"text","text":"42"}}`)
	if _, err := s.Answer(ctx, answered.ID, "alice", "", completion); err != nil {
		t.Fatal(err)
	}
	rejected := mustAdd(t, s, sampleItem("beta"), time.Hour)
	if _, err := s.Reject(ctx, rejected.ID, "bob", "the admin password, really?"); err != nil {
		t.Fatal(err)
	}

	entries, err := s.Audit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Seq                 int64
		Event               Event
		Item, Operator, Rev string
		Request, Result     string
		Outcome             State
		Detail              string
	}
	var got []row
	for _, e := range entries {
		got = append(got, row{e.Seq, e.Event, e.ItemID, e.Operator, e.PolicyRevision, e.RequestDigest, e.ResultDigest, e.Outcome, e.Detail})
	}
	orig := Digest(edited.Request)
	want := []row{
		{1, EventOpened, edited.ID, "", "rev-1", orig, "", StatePending, ""},
		{2, EventEdited, edited.ID, "alice", "rev-1", Digest(newParams), "", StateApproved, ""},
		{3, EventDelivered, edited.ID, "", "rev-1", Digest(newParams), "", StateDelivered, "released after approval"},
		{4, EventOpened, answered.ID, "", "rev-1", orig, "", StatePending, ""},
		{5, EventAnswered, answered.ID, "alice", "rev-1", orig, Digest(completion), StateApproved, ""},
		{6, EventOpened, rejected.ID, "", "rev-1", orig, "", StatePending, ""},
		// the operator's reason stays with the item, out of the chain
		{7, EventRejected, rejected.ID, "bob", "rev-1", orig, "", StateRejected, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	if only, _ := s.Audit(ctx, AuditFilter{Server: "alpha"}); len(only) != 3 {
		t.Errorf("--server alpha: %d entries, want 3", len(only))
	}
	if head, n, err := s.VerifyAudit(ctx); err != nil || n != 7 || head.Seq != 7 || head.Hash != entries[6].Hash {
		t.Errorf("VerifyAudit = %+v, %d, %v; want the 7th entry's hash", head, n, err)
	}
}

// TestAuditRecordsExpiryAndAbandonment: entries the queue writes itself
// carry no operator and the queue's own note.
func TestAuditRecordsExpiryAndAbandonment(t *testing.T) {
	inBubble(t, func(t *testing.T, s *Store) {
		expiring := mustAdd(t, s, sampleItem("alpha"), time.Minute)
		orphan := mustAdd(t, s, sampleItem("alpha"), time.Hour)
		s.alive = func(context.Context, rowReader, string) bool { return false }
		s.owner = "other"
		time.Sleep(2 * time.Minute)
		if _, err := s.List(t.Context(), Filter{}); err != nil {
			t.Fatal(err)
		}
		entries, _ := s.Audit(t.Context(), AuditFilter{})
		events := map[string]AuditEntry{}
		for _, e := range entries[2:] {
			events[e.ItemID] = e
		}
		if e := events[expiring.ID]; e.Event != EventExpired || e.Operator != "" || e.Detail != NoteExpired || !e.At.Equal(expiring.ExpiresAt) {
			t.Errorf("expiry entry = %+v; want expired at the deadline, by nobody", e)
		}
		if e := events[orphan.ID]; e.Event != EventAbandoned || e.Detail != NoteOwnerGone {
			t.Errorf("orphan entry = %+v; want abandoned", e)
		}
	})
}

// TestVerifyAuditNamesTheTamperedEntry edits the store file the way
// someone with write access to it could, bypassing the triggers, and
// checks that verify names what was done and where.
func TestVerifyAuditNamesTheTamperedEntry(t *testing.T) {
	cases := []struct {
		name     string
		tamper   func(t *testing.T, db *db, entries []AuditEntry)
		kind     string
		seq, end int64
	}{
		{"an edited operator", func(t *testing.T, db *db, _ []AuditEntry) {
			mustExec(t, db, `UPDATE audit SET operator = 'mallory' WHERE seq = 3`)
		}, "edited", 3, 0},
		{"an edit with its hash recomputed", func(t *testing.T, db *db, es []AuditEntry) {
			e := es[2]
			e.Operator = "mallory"
			mustExec(t, db, `UPDATE audit SET operator = ?, hash = ? WHERE seq = 3`, e.Operator, e.chainHash())
		}, "edited", 3, 0},
		{"a deleted entry", func(t *testing.T, db *db, _ []AuditEntry) {
			mustExec(t, db, `DELETE FROM audit WHERE seq = 4`)
		}, "deleted", 4, 4},
		{"two deleted entries", func(t *testing.T, db *db, _ []AuditEntry) {
			mustExec(t, db, `DELETE FROM audit WHERE seq IN (2, 3)`)
		}, "deleted", 2, 3},
		{"the last entry deleted", func(t *testing.T, db *db, _ []AuditEntry) {
			mustExec(t, db, `DELETE FROM audit WHERE seq = 6`)
		}, "deleted", 6, 6},
		{"two entries swapped", func(t *testing.T, db *db, _ []AuditEntry) {
			mustExec(t, db, `UPDATE audit SET seq = -1 WHERE seq = 3`)
			mustExec(t, db, `UPDATE audit SET seq = 3 WHERE seq = 4`)
			mustExec(t, db, `UPDATE audit SET seq = 4 WHERE seq = -1`)
		}, "edited", 3, 0},
		{"the chain head removed", func(t *testing.T, db *db, _ []AuditEntry) {
			mustExec(t, db, `DELETE FROM audit_head`)
		}, "inserted", 1, 0},
		{"the last entries cut, the head left", func(t *testing.T, db *db, _ []AuditEntry) {
			mustExec(t, db, `DELETE FROM audit WHERE seq >= 5`)
		}, "deleted", 5, 6},
		{"an inserted entry, even a well-formed one", func(t *testing.T, db *db, es []AuditEntry) {
			e := es[5]
			e.Seq, e.Prev, e.Event, e.Operator, e.Outcome = 7, e.Hash, EventApproved, "mallory", StateApproved
			e.Hash = e.chainHash()
			mustExec(t, db, `INSERT INTO audit (`+auditColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
				e.Seq, toNanos(e.At), string(e.Event), e.ItemID, e.Parent, e.Server, e.Stage, e.DecisionID,
				e.PolicyRevision, e.Operator, e.RequestDigest, e.ResultDigest, string(e.Outcome), e.Detail, e.Prev, e.Hash)
		}, "inserted", 7, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := stateDir(t)
			s := openStore(t, dir)
			for range 3 {
				it := mustAdd(t, s, sampleItem("alpha"), time.Hour)
				if _, err := s.Reject(t.Context(), it.ID, "bob", ""); err != nil {
					t.Fatal(err)
				}
			}
			entries, _ := s.Audit(t.Context(), AuditFilter{})
			if _, _, err := s.VerifyAudit(t.Context()); err != nil {
				t.Fatalf("before tampering: %v", err)
			}
			db := rawDB(t, dir)
			dropAuditGuards(t, db)
			tc.tamper(t, db, entries)

			_, _, err := s.VerifyAudit(t.Context())
			var ce *ChainError
			if !errors.As(err, &ce) || ce.Kind != tc.kind || ce.Seq != tc.seq || (tc.end != 0 && ce.Last != tc.end) {
				t.Fatalf("VerifyAudit = %v (%+v); want %s at %d..%d", err, ce, tc.kind, tc.seq, tc.end)
			}
			t.Log(err)
		})
	}
}

// TestAuditIsAppendOnlyThroughSQL: the triggers refuse changes made with
// plain SQL, so only someone who removes them first can tamper.
func TestAuditIsAppendOnlyThroughSQL(t *testing.T) {
	dir := stateDir(t)
	s := openStore(t, dir)
	mustAdd(t, s, sampleItem("alpha"), time.Hour)
	db := rawDB(t, dir)
	for _, q := range []string{`UPDATE audit SET operator = 'x'`, `DELETE FROM audit`} {
		if _, err := db.Exec(q); err == nil {
			t.Errorf("%s succeeded", q)
		}
	}
}

// rawDB opens the store's database directly, as a tamperer with access
// to the file (or the PostgreSQL database) would.
func rawDB(t *testing.T, dir string) *db {
	t.Helper()
	driver, dsnOrURL, d := "sqlite", dsn(filepath.Join(dir, FileName)), dialectSQLite
	if onPostgres() {
		u, err := schemaURL(testPostgres, dir)
		if err != nil {
			t.Fatal(err)
		}
		driver, dsnOrURL, d = "pgx", u, dialectPostgres
	}
	sqlDB, err := sql.Open(driver, dsnOrURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB.Close() })
	return &db{DB: sqlDB, binder: newBinder(d)}
}

// dropAuditGuards removes the triggers that keep the audit log
// append-only, as the database's owner can.
func dropAuditGuards(t *testing.T, db *db) {
	t.Helper()
	if db.dialect == dialectPostgres {
		mustExec(t, db, `ALTER TABLE audit DISABLE TRIGGER USER`)
		return
	}
	mustExec(t, db, `DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete`)
}

func mustExec(t *testing.T, db *db, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestChainHashFieldsStayApart: text that moves from one field of an
// entry to the next, separators and length prefixes included, changes
// the entry's hash, so nobody can pass off one entry's hash as another's
// by choosing what a field holds (an operator's name, a server's, a
// policy revision from a bundle).
func TestChainHashFieldsStayApart(t *testing.T) {
	base := AuditEntry{Seq: 7, At: time.Unix(1, 2), Event: EventRejected, ItemID: "rv-1", Server: "alpha", Operator: "bob",
		RequestDigest: "sha256:x", Detail: "note"}
	variants := []func(e *AuditEntry){ // each would collide if fields were only joined by newlines
		func(e *AuditEntry) { e.Operator, e.RequestDigest = "bob\nsha256:x", "" },
		func(e *AuditEntry) { e.Operator, e.RequestDigest = "bob\n8:sha256:x", "" },
		func(e *AuditEntry) { e.Operator, e.Detail = "bob4:note", "" },
		func(e *AuditEntry) { e.Operator, e.Detail = "bo", "b\nnote" },
		func(e *AuditEntry) { e.Server, e.Stage = "alpha\n0:", "" },
		func(e *AuditEntry) { e.PolicyRevision = "\x00" },
	}
	for i, change := range variants {
		e := base
		change(&e)
		if e.chainHash() == base.chainHash() {
			t.Errorf("variant %d (%+v) hashes as the original", i, e)
		}
	}
}
