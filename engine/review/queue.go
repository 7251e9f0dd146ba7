package review

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Add opens a pending item that expires after timeout, without a
// decision: for tools and tests. serve opens each review with the
// decision that holds it (Commit, Charge). It assigns the ID, CreatedAt,
// ExpiresAt and State, and makes this process the Owner: the item is
// abandoned if this process ends before it is decided. Like every item,
// it comes into the queue through opened, which Store.Opened hears.
func (s *Store) Add(ctx context.Context, it Item, timeout time.Duration) (Item, error) {
	if err := checkNew(it, timeout); err != nil {
		return Item{}, fmt.Errorf("add review: %w", err)
	}
	if err := s.checkDecidable(); err != nil {
		return Item{}, fmt.Errorf("add review: %w", err)
	}
	due := time.Now().Add(timeout)
	it = lineage(ctx, s.fresh(it, timeout))
	err := s.write(ctx, func(tx *writeTx) error {
		if err := insertItem(ctx, tx, it); err != nil {
			return err
		}
		return s.record(ctx, tx, it.ID, "", StatePending, "", "", it.CreatedAt)
	})
	if err != nil {
		return Item{}, fmt.Errorf("add review: %w", err)
	}
	s.opened(pendingEntry{item: it, due: due})
	return it, nil
}

// checkNew refuses an item the CLI could not show or the firewall could
// not act on.
func checkNew(it Item, timeout time.Duration) error {
	switch {
	case timeout <= 0:
		return fmt.Errorf("timeout %v is not positive", timeout)
	case it.Server == "":
		return errors.New("server is empty")
	case it.Stage != StageRequest && it.Stage != StageResult:
		return fmt.Errorf("stage %q is neither %q nor %q", it.Stage, StageRequest, StageResult)
	case len(it.Request) == 0:
		return errors.New("request is empty")
	case it.Stage == StageResult && len(it.Result) == 0:
		return errors.New("result stage without a result")
	case it.Stage == StageRequest && len(it.Result) != 0:
		return errors.New("request stage with a result")
	}
	for name, m := range map[string]json.RawMessage{"request": it.Request, "result": it.Result, "context": it.Context} {
		if len(m) != 0 && !json.Valid(m) {
			return fmt.Errorf("%s is not valid JSON", name)
		}
	}
	return nil
}

// fresh fills in what the queue owns and clears what only a decision sets.
func (s *Store) fresh(it Item, timeout time.Duration) Item {
	t := s.now()
	it.ID, it.State, it.Owner = newID(), StatePending, s.owner
	it.CreatedAt, it.ExpiresAt = t, t.Add(timeout)
	it.DecidedBy, it.DecidedAt, it.Note = "", time.Time{}, ""
	it.FinishedAt, it.FinishNote = time.Time{}, ""
	it.Edited, it.EditDiff, it.Answer, it.ErasedAt = nil, "", nil, time.Time{}
	if it.Reasons == nil {
		it.Reasons = []Reason{}
	}
	return it
}

// openItem writes an item an entry opens, inside the entry's write: the
// item, its first history row and its audit entry.
func (s *Store) openItem(ctx context.Context, tx *writeTx, it Item) error {
	if err := insertItem(ctx, tx, it); err != nil {
		return err
	}
	return s.record(ctx, tx, it.ID, "", StatePending, "", "", it.CreatedAt)
}

// insertItem writes a new item, linked to its parent as lineage says.
func insertItem(ctx context.Context, tx *writeTx, it Item) error {
	it = lineage(ctx, it)
	_, err := tx.ExecContext(ctx, `INSERT INTO items (id, parent, decision_id,
		server, label, stage, era, state, created_at, expires_at, reasons,
		request, result, context, owner, waived) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		it.ID, it.Parent, it.DecisionID, it.Server, it.Label, it.Stage, it.Era,
		string(it.State), toNanos(it.CreatedAt), toNanos(it.ExpiresAt),
		encodeReasons(it.Reasons), blob(it.Request), blob(it.Result),
		blob(it.Context), it.Owner, encodeReasons(it.Waived))
	return err
}

// Get returns one item, first closing it if it is past its deadline or its
// waiting process has ended, so a reader never sees a stale pending item.
func (s *Store) Get(ctx context.Context, id string) (Item, error) {
	it, err := load(ctx, s.db, id)
	if err != nil {
		return Item{}, opError("get", id, err)
	}
	if _, due := s.due(it, s.now(), func(o string) bool { return s.isAlive(ctx, s.db, o) }); !due {
		return it, nil
	}
	it, err = s.settleOne(ctx, id)
	return it, opError("get", id, err)
}

// List returns pending items (every item with f.All), oldest first, newest
// last, after closing the ones that are due. Items added in the same
// nanosecond keep the order they were added in.
func (s *Store) List(ctx context.Context, f Filter) ([]Item, error) {
	if _, err := s.sweep(ctx); err != nil {
		return nil, fmt.Errorf("list reviews: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+itemColumns+` FROM items
		WHERE (? OR state = 'pending') AND (? = '' OR server = ?)
		ORDER BY created_at, rowid`, f.All, f.Server, f.Server)
	if err != nil {
		return nil, fmt.Errorf("list reviews: %w", err)
	}
	items, err := scanItems(rows)
	if err != nil {
		return nil, fmt.Errorf("list reviews: %w", err)
	}
	return items, nil
}

// PendingIDs returns the ids of the pending items, after closing the ones
// that are due, as List does: what a process waiting on many items polls,
// without reading and decoding every item.
func (s *Store) PendingIDs(ctx context.Context) (map[string]bool, error) {
	if _, err := s.sweep(ctx); err != nil {
		return nil, fmt.Errorf("list pending reviews: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT id FROM items WHERE state = 'pending'")
	if err != nil {
		return nil, fmt.Errorf("list pending reviews: %w", err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list pending reviews: %w", err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list pending reviews: %w", err)
	}
	return ids, nil
}

func scanItems(rows *sql.Rows) ([]Item, error) {
	defer rows.Close()
	var items []Item
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

// opError adds the operation and id to a storage error. ErrNotFound and
// DecidedError already name the item and pass through unchanged, so the
// CLI prints "review rv-…: not found", not the same id twice.
func opError(op, id string, err error) error {
	var decided *DecidedError
	if err == nil || errors.Is(err, ErrNotFound) || errors.As(err, &decided) {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, id, err)
}
