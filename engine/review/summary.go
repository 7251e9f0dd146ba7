package review

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Pending is how many reviews of one server and stage wait for a person,
// and when the oldest of them was opened.
type Pending struct {
	Server, Stage string
	Count         int64
	Oldest        time.Time
}

// PendingSummary counts the pending reviews by server and stage in one
// query, reading nothing of the items themselves: what a metrics scrape
// or `mcpx-fw status` asks, as often as it likes, of a store every
// replica shares. It writes nothing, so items past their deadline that
// nobody has swept yet are still counted: they are still waiting.
func (s *Store) PendingSummary(ctx context.Context) ([]Pending, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT server, stage, COUNT(*), MIN(created_at) FROM items
		WHERE state = 'pending' GROUP BY server, stage ORDER BY server, stage`)
	if err != nil {
		return nil, fmt.Errorf("summarise pending reviews: %w", err)
	}
	defer rows.Close()
	var out []Pending
	for rows.Next() {
		var p Pending
		var oldest int64
		if err := rows.Scan(&p.Server, &p.Stage, &p.Count, &oldest); err != nil {
			return nil, fmt.Errorf("summarise pending reviews: %w", err)
		}
		p.Oldest = fromNanos(oldest)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("summarise pending reviews: %w", err)
	}
	return out, nil
}

// errProbeDone ends Writable's transaction once the write went through.
var errProbeDone = errors.New("write probe done")

// Writable proves the store takes writes now: it opens a write
// transaction (BEGIN IMMEDIATE on SQLite, which takes the file's write
// lock), runs an UPDATE that matches no row (refused by a read-only file,
// a standby or a read-only transaction default on PostgreSQL), and rolls
// it back. Readiness asks it; ctx bounds how long it may wait for another
// writer, so a dead store fails the probe instead of hanging it.
func (s *storage) Writable(ctx context.Context) error {
	tx, err := s.begin(ctx) // on PostgreSQL, past connections a restart cut
	if err != nil {
		return s.probeError(err)
	}
	wtx := &writeTx{Tx: tx, binder: s.db.binder}
	_, err = wtx.ExecContext(ctx, "UPDATE items SET note = note WHERE id = ?", "")
	if err == nil {
		err = errProbeDone
	}
	err = errors.Join(err, ignoreDone(tx.Rollback()))
	if errors.Is(err, errProbeDone) {
		return nil
	}
	return s.probeError(err)
}

// probeError names the store a failed probe was made of.
func (s *storage) probeError(err error) error {
	return fmt.Errorf("review store %s (%s) is not writable: %w", s.path, s.Backend(), s.storageError(err, 0))
}
