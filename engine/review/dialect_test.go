package review

import "testing"

func TestBindNumbersPlaceholdersForPostgres(t *testing.T) {
	cases := []struct{ in, sqlite, postgres string }{
		{"SELECT 1", "SELECT 1", "SELECT 1"},
		{"WHERE a = ? AND b = ?", "WHERE a = ? AND b = ?", "WHERE a = $1 AND b = $2"},
		{"WHERE a = '?' AND b = ?", "WHERE a = '?' AND b = ?", "WHERE a = '?' AND b = $1"},
		{`SELECT "a?b", ?, 'it''s ?', ?`, `SELECT "a?b", ?, 'it''s ?', ?`, `SELECT "a?b", $1, 'it''s ?', $2`},
	}
	for _, tc := range cases {
		for _, b := range []binder{newBinder(dialectSQLite), newBinder(dialectPostgres), {dialect: dialectPostgres}} {
			want := tc.sqlite
			if b.dialect == dialectPostgres {
				want = tc.postgres
			}
			for range 2 { // the second reads the cache
				if got := b.bind(tc.in); got != want {
					t.Errorf("%s bind(%q) = %q, want %q", b.dialect, tc.in, got, want)
				}
			}
		}
	}
}

// TestOnlySelectsAreRetried: the pool runs a statement again after a lost
// connection only if it reads; a write that returns rows is not.
func TestOnlySelectsAreRetried(t *testing.T) {
	cases := []struct {
		q     string
		reads bool
	}{
		{"SELECT 1", true},
		{"\n\t\tSELECT id FROM items", true},
		{"DELETE FROM continuations WHERE nonce = ? RETURNING payload", false},
		{"UPDATE items SET state = ? RETURNING id", false},
		{"INSERT INTO items VALUES (?) RETURNING id", false},
		{"WITH gone AS (DELETE FROM items RETURNING id) SELECT id FROM gone", false},
	}
	for _, tc := range cases {
		if got := reads(tc.q); got != tc.reads {
			t.Errorf("reads(%q) = %v, want %v", tc.q, got, tc.reads)
		}
	}
}
