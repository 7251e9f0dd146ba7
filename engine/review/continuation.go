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

// Continuations: what a serve replica handed to a 2026-07-28 host and needs
// back, on the host's retry, to check the host's answers (the entries as
// cleared, with the codes a person approved and the review each went
// through). The host holds only a sealed requestState naming the row by
// its nonce; the row lives here so that the retry may land on any replica
// sharing the store. The payload is the relay's own encoding, opaque here.
//
// A row is taken once: TakeContinuation deletes and returns it in one
// statement, so of any number of retries carrying one state, on any number
// of replicas, exactly one finds it. An expired row is never taken; it is
// deleted by the next put after contSweepEvery, and by Prune.

// MaxContinuationBytes bounds one continuation's payload. What a round
// holds is bounded before it gets here (the relay's limits.max_held_bytes,
// 16 MiB by default); this bound keeps a misconfigured limit from writing
// rows a database would refuse or choke on.
const MaxContinuationBytes = 64 << 20

// contSweepEvery spaces out each Store's sweeps of expired continuations:
// one indexed delete a minute is enough to keep the table to the rows of
// one state lifetime, and replicas sweeping at every put would contend for
// the same rows.
const contSweepEvery = time.Minute

// ErrContinuationGone is returned (wrapped; test with errors.Is) by
// TakeContinuation when no live row matches: it was taken already, by
// this replica or another, or it expired, or it was never put.
var ErrContinuationGone = errors.New("continuation already taken, expired or never stored")

// ErrContinuationTooLarge is returned by PutContinuation for a payload
// over MaxContinuationBytes.
var ErrContinuationTooLarge = errors.New("continuation payload too large")

// Continuation is one row: the nonce of the sealed requestState that names
// it, the server and call (a digest of the host's call) it was issued
// for, when it stops being resumable, and the payload.
type Continuation struct {
	Nonce   string
	Server  string
	Call    string
	Expires time.Time
	Payload []byte
}

// continuations is the store of requests a retry may resume: one row per
// nonce, taken at most once across every process sharing the store. It
// touches the continuations table only, and takes no store-wide lock on
// PostgreSQL.
type continuations struct {
	*storage
	// sweepAt is when PutContinuation next sweeps expired continuations
	// (Unix nanoseconds).
	sweepAt atomic.Int64
}

// PutContinuation stores c, sweeping the rows that have expired first
// when the last sweep is contSweepEvery old. A nonce is random and used
// once, so a second put of one nonce is an error.
func (cs *continuations) PutContinuation(ctx context.Context, c Continuation) error {
	switch {
	case c.Nonce == "" || c.Server == "" || c.Call == "" || c.Expires.IsZero():
		return errors.New("put continuation: nonce, server, call and expiry are required")
	case len(c.Payload) > MaxContinuationBytes:
		return fmt.Errorf("put continuation: %w: %d bytes, over %d", ErrContinuationTooLarge, len(c.Payload), MaxContinuationBytes)
	}
	cs.sweepContinuationsDue(ctx)
	payload := c.Payload
	if payload == nil {
		payload = []byte{} // NOT NULL: an empty payload is still a payload
	}
	err := cs.execOne(ctx, `INSERT INTO continuations (nonce, server, call_digest, expires_at, payload)
		VALUES (?,?,?,?,?)`, c.Nonce, c.Server, c.Call, toNanos(c.Expires), payload)
	if err != nil {
		return fmt.Errorf("put continuation: %w", err)
	}
	return nil
}

// TakeContinuation deletes and returns the payload of the live row for
// nonce, if it was issued for server and call: one statement (DELETE …
// RETURNING, on both backends), so one-time use holds across every
// process sharing the store. A nonce presented with another server or call
// than its row's finds nothing and leaves the row for its own call.
func (cs *continuations) TakeContinuation(ctx context.Context, nonce, server, call string) ([]byte, error) {
	var payload []byte
	start := time.Now()
	cs.wmu.Lock()
	err := cs.db.QueryRowContext(ctx, `DELETE FROM continuations
		WHERE nonce = ? AND server = ? AND call_digest = ? AND expires_at > ?
		RETURNING payload`, nonce, server, call, cs.now().UnixNano()).Scan(&payload)
	cs.wmu.Unlock()
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("take continuation: %w", ErrContinuationGone)
	}
	if err != nil {
		return nil, fmt.Errorf("take continuation: %w", cs.committed(err, time.Since(start)))
	}
	return payload, nil
}

// HeldContinuations reports which of nonces still have a live row: the
// ones not yet taken by any process and not expired.
func (cs *continuations) HeldContinuations(ctx context.Context, nonces []string) (map[string]bool, error) {
	held := make(map[string]bool, len(nonces))
	const batch = 500 // well under either database's limit on bound parameters
	for len(nonces) > 0 {
		n := min(batch, len(nonces))
		if err := cs.heldBatch(ctx, nonces[:n], held); err != nil {
			return nil, fmt.Errorf("held continuations: %w", err)
		}
		nonces = nonces[n:]
	}
	return held, nil
}

func (cs *continuations) heldBatch(ctx context.Context, nonces []string, held map[string]bool) error {
	q := "SELECT nonce FROM continuations WHERE expires_at > ? AND nonce IN (?" + repeatPlaceholder(len(nonces)-1) + ")"
	args := make([]any, 0, len(nonces)+1)
	args = append(args, cs.now().UnixNano())
	for _, n := range nonces {
		args = append(args, n)
	}
	rows, err := cs.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return err
		}
		held[n] = true
	}
	return rows.Err()
}

// repeatPlaceholder is ",?" n times.
func repeatPlaceholder(n int) string {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, ",?"...)
	}
	return string(b)
}

// sweepContinuationsDue sweeps when the last sweep of this Store is
// contSweepEvery old. A failed sweep is logged, and fails no put: the
// rows it left are never taken, and the next sweep deletes them.
func (cs *continuations) sweepContinuationsDue(ctx context.Context) {
	now := cs.now()
	next := cs.sweepAt.Load()
	if now.UnixNano() < next || !cs.sweepAt.CompareAndSwap(next, now.Add(contSweepEvery).UnixNano()) {
		return
	}
	if _, err := cs.sweepContinuations(ctx); err != nil {
		cs.log.Warn("expired continuations not swept", zap.Error(err))
	}
}

// sweepContinuations deletes the rows that have expired, and returns how
// many: no retry can resume them, and they hold requests' text.
func (cs *continuations) sweepContinuations(ctx context.Context) (int64, error) {
	var n int64
	err := cs.execOneResult(ctx, func(r sql.Result) {
		n, _ = r.RowsAffected()
	}, "DELETE FROM continuations WHERE expires_at <= ?", cs.now().UnixNano())
	return n, err
}
