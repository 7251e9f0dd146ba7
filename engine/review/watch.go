package review

import (
	"context"
	"fmt"
	"time"
)

// Watch calls fn once for every item that is pending when it starts and
// for every pending item added later, by any process, in the order they
// were added, until ctx ends (then it returns nil) or fn fails. New items
// are found by polling every PollInterval, which is what lets a watcher in
// one shell see items opened by serve processes elsewhere. An item that
// was decided, expired or abandoned before a poll saw it is skipped:
// nobody can act on it any more.
func (s *Store) Watch(ctx context.Context, f Filter, fn func(Item) error) error {
	err := s.watch(ctx, f, fn)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("watch reviews: %w", err)
	}
	return nil
}

func (s *Store) watch(ctx context.Context, f Filter, fn func(Item) error) error {
	var cursor int64
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(rowid), 0) FROM items").Scan(&cursor); err != nil {
		return err
	}
	tick := time.NewTicker(s.pollInterval())
	defer tick.Stop()
	items, _, err := s.arrivals(ctx, "rowid <= ? AND state = 'pending'", cursor, f)
	for {
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		items, cursor, err = s.arrivals(ctx, "rowid > ?", cursor, f)
	}
}

// arrivals returns the items where (with position pos) holds that are
// still pending and not due, and the highest position it read (pos when
// none). Items are never deleted and are inserted under the write lock, so
// rowids grow in commit order and one number is a complete bookmark.
func (s *Store) arrivals(ctx context.Context, where string, pos int64, f Filter) ([]Item, int64, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT rowid, "+itemColumns+" FROM items WHERE "+where+
		" AND (? = '' OR server = ?) ORDER BY rowid", pos, f.Server, f.Server)
	if err != nil {
		return nil, pos, err
	}
	defer rows.Close()
	alive, t := s.memoAlive(ctx), s.now()
	var out []Item
	for rows.Next() {
		it, err := scanItem(rowidScanner{rows, &pos})
		if err != nil {
			return nil, pos, err
		}
		if _, due := s.due(it, t, alive); it.State == StatePending && !due {
			out = append(out, it)
		}
	}
	return out, pos, rows.Err()
}

// rowidScanner reads a leading rowid column before the item's columns.
type rowidScanner struct {
	r     scanner
	rowid *int64
}

func (w rowidScanner) Scan(dest ...any) error {
	return w.r.Scan(append([]any{w.rowid}, dest...)...)
}
