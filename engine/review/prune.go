package review

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// NoteErased is the audit detail of an erased item.
const NoteErased = "prompt and completion text erased after the retention period"

// pruneBatch bounds how many items one prune transaction erases, so serve's
// hourly prune never holds the write lock long enough to stall a decision.
const pruneBatch = 200

// retention erases the text of finished items and the continuations that
// expired, each erasure recorded in the audit chain. It touches the items'
// text and erased_at, the continuations table (through conts), the
// handovers table (through hands) and the audit chain; closing what is
// due first is the queue's (closeDue).
type retention struct {
	*storage
	audit *auditChain
	conts *continuations
	hands *handovers
	// closeDue closes the items that are due, so they count as finished:
	// the Store's sweep.
	closeDue func(context.Context) ([]Item, error)
	// keepInputs is the Store's KeepInputs.
	keepInputs *time.Duration
	// keepInputsBytes is the Store's KeepInputsBytes.
	keepInputsBytes *int64
	// trimMu lets one trimInputs run at a time (a write's and the hourly
	// prune's), so together they delete no more than the excess.
	trimMu sync.Mutex
	// trimmed counts the inputs trimInputs deleted since the Store opened.
	trimmed atomic.Uint64
}

// Prune erases the prompt and completion text (request, result, the
// operator's edit, diff and answer) of every item that finished more than
// retain ago, and writes one audit entry per item. Ids, states, reasons,
// operators and times stay, and the audit log keeps the digests, so the
// chain still verifies. Retain 0 keeps everything. It returns how many
// items it erased. Whatever retain, it first deletes the continuations
// that have expired (continuation.go): they are no record, only requests
// no retry can resume any more; the handovers past their deadline
// (handover.go), which no asker waits for; and the policy inputs kept
// for replay longer than KeepInputs, then those of the servers whose
// inputs take the most until the rest fit KeepInputsBytes (inputs.go).
//
// The store zeroes freed space (secure_delete, see dsn), and Prune
// checkpoints and truncates the write-ahead log, so the text does not
// linger in free pages or old page images. On PostgreSQL the erased text
// stays in dead row versions until VACUUM reclaims them (autovacuum, or the
// server's own retention).
func (r *retention) Prune(ctx context.Context, retain time.Duration) (int, error) {
	if _, err := r.conts.sweepContinuations(ctx); err != nil {
		return 0, fmt.Errorf("prune: continuations: %w", err)
	}
	if err := r.hands.sweepHandovers(ctx); err != nil {
		return 0, fmt.Errorf("prune: handovers: %w", err)
	}
	if _, err := r.pruneInputs(ctx, *r.keepInputs); err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	if _, err := r.trimInputs(ctx, *r.keepInputsBytes); err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	if retain <= 0 {
		return 0, nil
	}
	if _, err := r.closeDue(ctx); err != nil { // close what is due first, so it can count as finished
		return 0, fmt.Errorf("prune: %w", err)
	}
	total := 0
	for {
		n, err := r.pruneOnce(ctx, r.now().Add(-retain))
		total += n
		if err != nil {
			return total, fmt.Errorf("prune: %w", err)
		}
		if n < pruneBatch {
			break
		}
	}
	if total > 0 && r.db.dialect == dialectSQLite {
		if _, err := r.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return total, fmt.Errorf("prune: checkpoint: %w", err)
		}
	}
	if total > 0 {
		r.log.Info("review text erased", zap.Int("items", total), zap.Duration("retain", retain))
	}
	return total, nil
}

// pruneOnce erases up to pruneBatch items that finished before cutoff.
func (r *retention) pruneOnce(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	err := r.write(ctx, func(tx *writeTx) error {
		items, err := erasable(ctx, tx, cutoff)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := r.erase(ctx, tx, it); err != nil {
				return err
			}
		}
		n = len(items)
		return nil
	})
	return n, err
}

// erasable lists finished, not yet erased items whose last transition is
// older than cutoff.
func erasable(ctx context.Context, tx *writeTx, cutoff time.Time) ([]Item, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+itemColumns+` FROM items
		WHERE erased_at = 0
		AND state IN ('rejected', 'expired', 'abandoned', 'delivered', 'failed')
		AND CASE WHEN decided_at > finished_at THEN decided_at ELSE finished_at END < ?
		ORDER BY created_at, rowid LIMIT ?`, cutoff.UnixNano(), pruneBatch)
	if err != nil {
		return nil, err
	}
	return scanItems(rows)
}

// erase writes the audit entry (with the digests of what it erases) and
// clears the text.
func (r *retention) erase(ctx context.Context, tx *writeTx, it Item) error {
	t := r.now()
	e := itemEntry(it, EventErased, t)
	e.Detail = NoteErased
	if err := r.audit.appendAudit(ctx, tx, e); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE items SET request = NULL, result = NULL,
		edited = NULL, edit_diff = '', answer = NULL, erased_at = ?
		WHERE id = ? AND erased_at = 0`, toNanos(t), it.ID)
	return err
}
