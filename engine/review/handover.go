package review

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Handovers: a bridged call (relay's, a 2026-07-28 host's call to an
// upstream that pushes) lives in the memory of the replica that started
// it, the holder. A retry of it that reaches another replica, the asker,
// is handed to the holder through this table: the asker writes a row
// named by the nonce of the call's sealed requestState, holding the host's
// answers; the holder takes it, resumes the upstream, and writes the
// upstream's answer into the row; the asker deletes the row as it reads
// that answer. Both payloads are relay's, sealed with the replicas' shared
// key; they are opaque here. On PostgreSQL each step wakes the other side
// at once (handoverChannel, migration 10's trigger); on SQLite both poll.
//
// The nonce is the row's key, so of any number of retries carrying one
// state, on any number of replicas, one writes the row and the others are
// refused (ErrHandoverClaimed): the upstream resumes once. Every row has
// a deadline (the asker's wait); an asker that gives up deletes its row,
// so a holder that answers late finds nothing to answer (ErrHandoverGone)
// and nothing is delivered. Rows past their deadline are swept, by the
// next ask after handoverSweepEvery and by Prune.

// handoverChannel is the PostgreSQL notification channel of handovers:
// "ask:<holder>" when a row is asked of a holder, "answer:<nonce>" when
// it is answered, "gone:<nonce>" when it is deleted (migration 10's
// trigger).
const handoverChannel = "mcpxfw_handover"

// handoverSweepEvery spaces out each Store's sweeps of rows past their
// deadline, as contSweepEvery does continuations'.
const handoverSweepEvery = time.Minute

// ErrHandoverClaimed is returned (wrapped) by AskHandover when a row for
// the nonce exists: another retry carrying the same state was handed over
// first.
var ErrHandoverClaimed = errors.New("handover already asked for this state")

// ErrHandoverGone is returned (wrapped) by AnswerHandover when the row is
// no longer taken: its asker gave up and deleted it, or it was swept.
var ErrHandoverGone = errors.New("handover gone: its asker gave up")

// Handover is one row: the nonce of the sealed state it resumes, the
// holder's name (the one it takes its rows by: relay's replica name),
// the server and call the state was sealed for, the asker's deadline,
// and the payload (the host's answers, as asked).
type Handover struct {
	Nonce   string
	Holder  string
	Server  string
	Call    string
	Expires time.Time
	Payload []byte
}

// handovers is the store of retries handed between replicas. It touches
// the handovers table only.
type handovers struct {
	*storage
	// sweepAt is when AskHandover next sweeps rows past their deadline
	// (Unix nanoseconds).
	sweepAt atomic.Int64
}

// AskHandover writes h for its holder, or fails with ErrHandoverClaimed
// when a row for its nonce is there already.
func (hs *handovers) AskHandover(ctx context.Context, h Handover) error {
	switch {
	case h.Nonce == "" || h.Holder == "" || h.Server == "" || h.Call == "" || h.Expires.IsZero():
		return errors.New("ask handover: nonce, holder, server, call and deadline are required")
	case len(h.Payload) > MaxContinuationBytes:
		return fmt.Errorf("ask handover: %w: %d bytes, over %d", ErrContinuationTooLarge, len(h.Payload), MaxContinuationBytes)
	}
	hs.sweepHandoversDue(ctx)
	var n int64
	err := hs.execOneResult(ctx, func(r sql.Result) { n, _ = r.RowsAffected() },
		`INSERT INTO handovers (nonce, holder, server, call_digest, state, expires_at, asked)
		VALUES (?,?,?,?,'asked',?,?) ON CONFLICT (nonce) DO NOTHING`,
		h.Nonce, h.Holder, h.Server, h.Call, toNanos(h.Expires), h.Payload)
	switch {
	case err != nil:
		return fmt.Errorf("ask handover: %w", err)
	case n == 0:
		return fmt.Errorf("ask handover: %w", ErrHandoverClaimed)
	}
	return nil
}

// TakeHandovers marks taken, and returns, the rows asked of holder and not
// past their deadline: one statement, so each is taken once. On SQLite,
// where an UPDATE takes the file's write lock even when it changes
// nothing, it looks first.
func (hs *handovers) TakeHandovers(ctx context.Context, holder string) ([]Handover, error) {
	now := hs.now().UnixNano()
	if hs.db.dialect != dialectPostgres {
		var asked bool
		err := hs.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM handovers
			WHERE holder = ? AND state = 'asked' AND expires_at > ?)`, holder, now).Scan(&asked)
		if err != nil || !asked {
			return nil, err
		}
	}
	hs.wmu.Lock()
	defer hs.wmu.Unlock()
	rows, err := hs.db.QueryContext(ctx, `UPDATE handovers SET state = 'taken'
		WHERE holder = ? AND state = 'asked' AND expires_at > ?
		RETURNING nonce, server, call_digest, expires_at, asked`, holder, now)
	if err != nil {
		return nil, fmt.Errorf("take handovers: %w", err)
	}
	defer rows.Close()
	var out []Handover
	for rows.Next() {
		h := Handover{Holder: holder}
		var exp int64
		if err := rows.Scan(&h.Nonce, &h.Server, &h.Call, &exp, &h.Payload); err != nil {
			return nil, fmt.Errorf("take handovers: %w", err)
		}
		h.Expires = time.Unix(0, exp)
		out = append(out, h)
	}
	return out, rows.Err()
}

// AnswerHandover writes the holder's answer into h, the row it took, or
// fails with ErrHandoverGone when its asker gave up. The row is h's ask,
// not any row of its nonce: once that asker withdrew, a replay of the
// state asked since has a row of its own (told apart by its deadline),
// which this answer must not reach.
func (hs *handovers) AnswerHandover(ctx context.Context, h Handover, payload []byte) error {
	if len(payload) > MaxContinuationBytes {
		return fmt.Errorf("answer handover: %w: %d bytes, over %d", ErrContinuationTooLarge, len(payload), MaxContinuationBytes)
	}
	var n int64
	err := hs.execOneResult(ctx, func(r sql.Result) { n, _ = r.RowsAffected() },
		`UPDATE handovers SET state = 'answered', answer = ? WHERE nonce = ? AND expires_at = ? AND state = 'taken'`,
		payload, h.Nonce, toNanos(h.Expires))
	switch {
	case err != nil:
		return fmt.Errorf("answer handover: %w", err)
	case n == 0:
		return fmt.Errorf("answer handover: %w", ErrHandoverGone)
	}
	return nil
}

// HandoverTaken reports whether h, the row its holder took, is still
// taken and unanswered: false once its asker withdrew it (or it was
// answered), though a replay of its state was asked since.
func (hs *handovers) HandoverTaken(ctx context.Context, h Handover) (bool, error) {
	var taken bool
	err := hs.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM handovers
		WHERE nonce = ? AND expires_at = ? AND state = 'taken')`, h.Nonce, toNanos(h.Expires)).Scan(&taken)
	return taken, err
}

// HandoverAnswer deletes and returns the answer of the row for nonce once
// it is answered; false while it is not.
func (hs *handovers) HandoverAnswer(ctx context.Context, nonce string) ([]byte, bool, error) {
	return hs.deleteHandover(ctx, `DELETE FROM handovers WHERE nonce = ? AND state = 'answered' RETURNING answer`, nonce)
}

// WithdrawHandover deletes the row for nonce, whatever its state: its
// asker gives up. An answer that came meanwhile is returned (true), so
// it is still delivered rather than lost.
func (hs *handovers) WithdrawHandover(ctx context.Context, nonce string) ([]byte, bool, error) {
	return hs.deleteHandover(ctx, `DELETE FROM handovers WHERE nonce = ? RETURNING answer`, nonce)
}

// deleteHandover runs q, a DELETE … RETURNING answer, for nonce.
func (hs *handovers) deleteHandover(ctx context.Context, q, nonce string) ([]byte, bool, error) {
	var answer []byte
	start := time.Now()
	hs.wmu.Lock()
	err := hs.db.QueryRowContext(ctx, q, nonce).Scan(&answer)
	hs.wmu.Unlock()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read handover: %w", hs.committed(err, time.Since(start)))
	}
	return answer, answer != nil, nil
}

// sweepHandoversDue deletes the rows past their deadline when the last
// sweep of this Store is handoverSweepEvery old. A failed sweep is logged
// and fails nothing: the rows it left are never taken.
func (hs *handovers) sweepHandoversDue(ctx context.Context) {
	now := hs.now()
	next := hs.sweepAt.Load()
	if now.UnixNano() < next || !hs.sweepAt.CompareAndSwap(next, now.Add(handoverSweepEvery).UnixNano()) {
		return
	}
	if err := hs.sweepHandovers(ctx); err != nil {
		hs.log.Warn("handovers past their deadline not swept", zap.Error(err))
	}
}

// sweepHandovers deletes the rows past their deadline: rows no asker waits
// for any more (one killed while it waited leaves its row), holding
// sealed answers no one will read.
func (hs *handovers) sweepHandovers(ctx context.Context) error {
	return hs.execOne(ctx, "DELETE FROM handovers WHERE expires_at <= ?", hs.now().UnixNano())
}
