package review

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Notes the queue writes when it closes an item itself (DecidedBy empty).
const (
	NoteExpired     = "no decision before the deadline"
	NoteOwnerGone   = "the waiting process ended"
	NoteCancelled   = "the request was cancelled"
	NoteUndelivered = "the waiting process ended before delivering the approval"
)

// closing is how the queue itself closes an item nobody can still act on.
type closing struct {
	to   State
	note string
	at   time.Time
}

// due reports whether it must be closed at time t. Expiry is applied
// lazily, by whoever reads the item first, so an item past its deadline is
// never approved even if its waiter is gone. An approved item whose waiter
// ended is failed: nobody is left to deliver it, and leaving it approved
// would suggest it still might be.
func (s *Store) due(it Item, t time.Time, alive func(string) bool) (closing, bool) {
	switch it.State {
	case StatePending:
		if !t.Before(it.ExpiresAt) {
			return closing{StateExpired, NoteExpired, it.ExpiresAt}, true
		}
		if !alive(it.Owner) {
			return closing{StateAbandoned, NoteOwnerGone, t}, true
		}
	case StateApproved:
		if !alive(it.Owner) {
			return closing{StateFailed, NoteUndelivered, t}, true
		}
	}
	return closing{}, false
}

// rowReader is what a liveness check reads through: the pool, or a write
// transaction (db and writeTx both spell queries for their dialect).
type rowReader interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// aliveByPID is s.alive on SQLite: an owner is a process id on this
// machine (owner.go), and nothing needs reading.
func aliveByPID(_ context.Context, _ rowReader, owner string) bool {
	return ownerAlive(owner)
}

// isAlive is s.alive with this process answered without asking.
func (s *Store) isAlive(ctx context.Context, q rowReader, owner string) bool {
	return owner == s.owner || s.alive(ctx, q, owner)
}

// settle closes it inside tx if it is due, and returns the item as it now
// stands. The caller holds the write lock, so the row cannot change under it.
// An owner's lease is read through tx: the transaction holds the
// store-wide write lock, and a read asking the pool for another
// connection could wait for one held by a transaction that waits for that
// lock (a burst of escalations) and, timing out, take a dead replica for
// alive while every replica's writes wait.
func (s *Store) settle(ctx context.Context, tx *writeTx, it Item, t time.Time) (Item, bool, error) {
	c, ok := s.due(it, t, func(owner string) bool { return s.isAlive(ctx, tx, owner) })
	if !ok {
		return it, false, nil
	}
	it, err := s.closeItem(ctx, tx, it, c)
	return it, err == nil, err
}

// closeItem moves it to c.to with a conditional update and one history row.
func (s *Store) closeItem(ctx context.Context, tx *writeTx, it Item, c closing) (Item, error) {
	from := it.State
	if from == StateApproved {
		it.FinishedAt, it.FinishNote = c.at, c.note
	} else {
		it.DecidedAt, it.Note = c.at, c.note
	}
	it.State = c.to
	if err := updateState(ctx, tx, it, from); err != nil {
		return Item{}, err
	}
	return it, s.record(ctx, tx, it.ID, from, c.to, "", c.note, c.at)
}

// updateState writes the item's state and decision fields, only if the row
// is still in state from, and releases the charge of a request that will
// never reach the host (releaseOnClose). A miss means another writer got
// there first, which the write lock rules out; it is an error rather than
// a silent overwrite.
func updateState(ctx context.Context, tx *writeTx, it Item, from State) error {
	res, err := tx.ExecContext(ctx, `UPDATE items SET state = ?, decided_by = ?,
		decided_at = ?, note = ?, finished_at = ?, finish_note = ?, edited = ?,
		edit_diff = ?, answer = ? WHERE id = ? AND state = ?`,
		string(it.State), it.DecidedBy, toNanos(it.DecidedAt), it.Note,
		toNanos(it.FinishedAt), it.FinishNote, blob(it.Edited), it.EditDiff,
		blob(it.Answer), it.ID, string(from))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("item %s left state %s during the update (rows %d, %v)", it.ID, from, n, err)
	}
	return releaseOnClose(ctx, tx, it)
}

// settleOne closes one item in its own transaction if it is still due.
func (s *Store) settleOne(ctx context.Context, id string) (Item, error) {
	var it Item
	var changed bool
	err := s.write(ctx, func(tx *writeTx) error {
		var err error
		if it, err = load(ctx, tx, id); err != nil {
			return err
		}
		it, changed, err = s.settle(ctx, tx, it, s.now())
		return err
	})
	if err != nil {
		return Item{}, err
	}
	if changed {
		s.closed(it)
	}
	return it, nil
}

// sweep closes every due item: expired ones and those whose waiting
// process ended. It reads first without the write lock, so a sweep that
// finds nothing costs one query.
func (s *Store) sweep(ctx context.Context) ([]Item, error) {
	ids, err := s.dueIDs(ctx)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	var closed []Item
	err = s.write(ctx, func(tx *writeTx) error {
		for _, id := range ids {
			it, err := load(ctx, tx, id)
			if err != nil {
				return err
			}
			it, changed, err := s.settle(ctx, tx, it, s.now())
			if err != nil {
				return err
			}
			if changed {
				closed = append(closed, it)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, it := range closed {
		s.closed(it)
	}
	return closed, nil
}

// dueIDs lists the open items that are due now. It reads only what due
// needs, not the payloads, and looks each owner's process up once.
func (s *Store) dueIDs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, state, expires_at, owner
		FROM items WHERE state IN ('pending', 'approved') ORDER BY created_at, rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	alive, t := s.memoAlive(ctx), s.now()
	var ids []string
	for rows.Next() {
		var it Item
		var expires int64
		if err := rows.Scan(&it.ID, &it.State, &expires, &it.Owner); err != nil {
			return nil, err
		}
		it.ExpiresAt = fromNanos(expires)
		if _, due := s.due(it, t, alive); due {
			ids = append(ids, it.ID)
		}
	}
	return ids, rows.Err()
}

func (s *Store) memoAlive(ctx context.Context) func(string) bool {
	seen := map[string]bool{}
	return func(owner string) bool {
		v, ok := seen[owner]
		if !ok {
			v = s.isAlive(ctx, s.db, owner)
			seen[owner] = v
		}
		return v
	}
}

// AbandonOrphans closes every open item whose waiting process has ended
// (pending ones become abandoned, approved ones failed) and expires the
// ones past their deadline. serve calls it at start; it returns how many
// items were orphans. On PostgreSQL the owner is a lease (lease.go): every
// Store's heartbeat calls this too, and it then deletes the dead leases
// that own nothing open any more.
func (s *Store) AbandonOrphans(ctx context.Context) (int, error) {
	closed, err := s.sweep(ctx)
	if err != nil {
		return 0, fmt.Errorf("abandon orphaned reviews: %w", err)
	}
	if s.db.dialect == dialectPostgres {
		if err := s.dropDeadLeases(ctx); err != nil {
			return 0, fmt.Errorf("abandon orphaned reviews: drop dead leases: %w", err)
		}
	}
	n := 0
	for _, it := range closed {
		if it.State == StateAbandoned || it.State == StateFailed {
			n++
		}
	}
	return n, nil
}

// closed wakes local waiters and logs an item the queue closed itself.
func (s *Store) closed(it Item) {
	s.dues.take(it.ID)
	s.notify(it.ID)
	s.log.Info("review closed", append(itemFields(it), zap.String("note", noteOf(it)))...)
}

func noteOf(it Item) string {
	if it.State == StateFailed {
		return it.FinishNote
	}
	return it.Note
}
