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
