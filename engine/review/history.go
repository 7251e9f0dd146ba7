package review

import (
	"context"
	"fmt"
	"time"
)

// Transition is one history row: every state change of an item, written in
// the same transaction as the change, so the history is complete by
// construction. The table refuses updates and deletes.
type Transition struct {
	Seq    int64     `json:"seq"`
	ItemID string    `json:"item_id"`
	From   State     `json:"from"` // "" for the item's creation
	To     State     `json:"to"`
	Actor  string    `json:"actor,omitempty"` // the operator; "" when the queue acted
	Note   string    `json:"note,omitempty"`
	Writer string    `json:"writer"` // owner token of the process that wrote the row
	At     time.Time `json:"at"`
}

// record appends one history row and its audit entry inside tx, after the
// item's row has taken the change: every transition goes through here, so
// the history and the audit chain are complete by construction.
func (s *Store) record(ctx context.Context, tx *writeTx, id string, from, to State, actor, note string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO history (item_id, from_state,
		to_state, actor, note, process, at) VALUES (?,?,?,?,?,?,?)`,
		id, string(from), string(to), actor, note, s.owner, toNanos(at))
	if err != nil {
		return err
	}
	it, err := load(ctx, tx, id)
	if err != nil {
		return err
	}
	return s.appendAudit(ctx, tx, transitionEntry(it, from, actor, note, at))
}

// History returns an item's transitions, oldest first. ErrNotFound for an
// id the queue never held.
func (s *Store) History(ctx context.Context, id string) ([]Transition, error) {
	if _, err := load(ctx, s.db, id); err != nil {
		return nil, opError("history", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, item_id, from_state,
		to_state, actor, note, process, at FROM history WHERE item_id = ?
		ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", id, err)
	}
	defer rows.Close()
	var out []Transition
	for rows.Next() {
		var t Transition
		var at int64
		if err := rows.Scan(&t.Seq, &t.ItemID, &t.From, &t.To, &t.Actor, &t.Note, &t.Writer, &at); err != nil {
			return nil, fmt.Errorf("history %s: %w", id, err)
		}
		t.At = fromNanos(at)
		out = append(out, t)
	}
	return out, rows.Err()
}
