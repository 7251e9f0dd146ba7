package review

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// recordTimeout bounds RecordDecision's write once it is detached from the
// caller's context.
const recordTimeout = 5 * time.Second

// Decision is one decision the firewall made, whatever its outcome. An
// escalation's Decision names the review item it opened.
type Decision struct {
	ID        string    `json:"id"`
	Server    string    `json:"server"`
	Stage     string    `json:"stage"`
	Outcome   string    `json:"outcome"` // pass, escalate, blocker, error
	Reasons   []Reason  `json:"reasons"`
	ReviewID  string    `json:"review_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// RecordDecision stores d; a zero CreatedAt means now. The write is
// detached from ctx's cancellation: a request the upstream cancelled still
// had its decision made, and the record must say so.
func (l *ledger) RecordDecision(ctx context.Context, d Decision) error {
	if d.ID == "" || d.Outcome == "" {
		return fmt.Errorf("record decision %q: id and outcome are required", d.ID)
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = l.now()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := l.write(ctx, func(tx *writeTx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO decisions (id, server, stage,
			outcome, reasons, review_id, created_at) VALUES (?,?,?,?,?,?,?)`,
			d.ID, d.Server, d.Stage, d.Outcome, encodeReasons(d.Reasons),
			d.ReviewID, toNanos(d.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("record decision %s: %w", d.ID, err)
	}
	return nil
}

// Decision returns the recorded decision with this id; ErrNotFound if none.
func (l *ledger) Decision(ctx context.Context, id string) (Decision, error) {
	var d Decision
	var reasons string
	var created int64
	err := l.db.QueryRowContext(ctx, `SELECT id, server, stage, outcome,
		reasons, review_id, created_at FROM decisions WHERE id = ?`, id).
		Scan(&d.ID, &d.Server, &d.Stage, &d.Outcome, &reasons, &d.ReviewID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Decision{}, fmt.Errorf("decision %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Decision{}, fmt.Errorf("decision %s: %w", id, err)
	}
	d.CreatedAt = fromNanos(created)
	if err := json.Unmarshal([]byte(reasons), &d.Reasons); err != nil {
		return Decision{}, fmt.Errorf("decision %s: reasons: %w", id, err)
	}
	return d, nil
}
