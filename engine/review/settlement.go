package review

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// A request's charge against its server's budget is kept on its first
// decision, the request-stage one that reserved it, at the time the
// request arrived, and every later change is made there: the completion
// settles it (Settlement.Completed), an operator's edit reserves it again
// for the edited request (Settlement.Reserve), and a refusal after it was
// reserved (its review rejected, expired, abandoned, or failed before
// delivery) releases it (releaseOnClose). Changed anywhere else, the
// charge would be split across windows: a completion settled an hour
// after its request would release, in the hour it lands in, a reservation
// that hour never held, and spend the budget again. Kept in one row, a
// request counts once, in every window that holds its arrival, whatever
// its charge became and whenever; the database adds each change to the
// buckets of the row's own time (migration 7).

// Settlement is what a later decision on a request does to the charge its
// first decision holds, in the same transaction as that decision is
// stored.
type Settlement struct {
	// Reservation is the id of the request's first decision, which holds
	// its charge. Only a request-stage decision of the entry's server with
	// an unsettled charge is changed.
	Reservation string
	// Completed settles the charge with the completion: it becomes what
	// was reserved less RequestedTokens (what the model might write), plus
	// Returned, and is final. When no reservation can be settled so (there
	// was none, or it is settled already), Returned is charged on the
	// entry's own decision instead: a completion is never free.
	Completed bool
	Returned  int64
	// Reserve, when not Completed, is the request's reservation made
	// afresh: its RequestedTokens and Tokens replace the ones held.
	Reserve Usage
}

// applySettlement applies e's settlement inside tx and returns the usage
// e's own decision carries.
func (l *ledger) applySettlement(ctx context.Context, tx *writeTx, e Entry) (Usage, error) {
	st := e.Settles
	if st == nil {
		return e.Usage, nil
	}
	if !st.Completed {
		_, err := l.stmts.execIn(ctx, l.db, tx, reserveAgain,
			st.Reserve.RequestedTokens, st.Reserve.Tokens, st.Reservation, e.Decision.Server)
		return e.Usage, err
	}
	res, err := l.stmts.execIn(ctx, l.db, tx, settleCompleted,
		st.Returned, st.Returned, e.Decision.ID, st.Reservation, e.Decision.Server)
	if err != nil {
		return Usage{}, err
	}
	u := e.Usage
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		u.ReturnedTokens, u.Tokens = u.ReturnedTokens+st.Returned, u.Tokens+st.Returned
	}
	return u, nil
}

// reserveAgain makes a request's reservation afresh (Settlement.Reserve).
const reserveAgain = `UPDATE decisions SET requested_tokens = ?, tokens = ?
	WHERE id = ? AND server = ? AND stage = 'request' AND settled_by = ''`

// settleCompleted settles a request's charge with its completion
// (Settlement.Completed).
const settleCompleted = `UPDATE decisions SET returned_tokens = ?,
	tokens = tokens - requested_tokens + ?, settled_by = ?
	WHERE id = ? AND server = ? AND stage = 'request' AND settled_by = ''`

// releaseOnClose releases the charge of a request-stage item's decision
// when it closes without reaching the host (rejected, expired, abandoned,
// or failed after approval): the model never read it, and its request
// stays counted. by, the item's id, is what released it.
func releaseOnClose(ctx context.Context, tx *writeTx, it Item) error {
	switch {
	case it.Stage != StageRequest:
		return nil
	case it.State != StateRejected && it.State != StateExpired && it.State != StateAbandoned && it.State != StateFailed:
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE decisions SET tokens = 0, settled_by = ?
		WHERE id = ? AND server = ? AND stage = 'request' AND settled_by = '' AND tokens <> 0`,
		it.ID, it.DecisionID, it.Server)
	return err
}

// chargeRow is one decision's charge and time, as the usage query sums it.
type chargeRow struct {
	at   int64
	sums [4]int64 // requests, requested_tokens, returned_tokens, tokens
}

// readCharge reads decision id's charge, if it is server's; ok is false
// when there is none.
func readCharge(ctx context.Context, q rowReader, server, id string) (chargeRow, bool, error) {
	var c chargeRow
	err := q.QueryRowContext(ctx, `SELECT created_at, requests, requested_tokens, returned_tokens, tokens
		FROM decisions WHERE id = ? AND server = ?`, id, server).
		Scan(&c.at, &c.sums[0], &c.sums[1], &c.sums[2], &c.sums[3])
	if errors.Is(err, sql.ErrNoRows) {
		return chargeRow{}, false, nil
	}
	return c, err == nil, err
}

// without is sums (the usage query's row) less c in every window ending
// at at that holds c's time: the usage as it would be had c charged
// nothing. sums itself is not changed.
func (q usageQuery) without(sums []int64, c chargeRow, at time.Time) []int64 {
	out := append([]int64(nil), sums...)
	for i, name := range q.names {
		if c.at < at.Add(-q.windows[name]).UnixNano() {
			continue
		}
		for j, v := range c.sums {
			out[1+4*i+j] -= v
		}
	}
	return out
}
