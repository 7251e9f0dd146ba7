package review

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"
)

// Charge reads server's usage in r's windows, hands it to decide, and
// commits the Entry decide returns (as Commit does: the decision, its
// usage and any review it opens, atomically) as one step per server: no
// other charge to server, made through this Store or any other process or
// replica on the same database, lands between the read and the commit. A
// policy that compares usage with a budget therefore sees exactly the
// usage its own charge adds to, and two decisions cannot both spend the
// last tokens of a budget. It returns the item the entry opened (the zero
// Item without one).
//
// decide must have no side effects: it may be called a second time with
// newer usage (on SQLite, when another process charged the server in
// between; see chargeChecked), and only the Entry of its last call is
// written. An error from decide writes nothing and is returned as is.
// The entry's Decision.Server must be server. Like Commit, the write is
// detached from ctx's cancellation; waiting for the server's turn and
// reading its usage are not.
//
// Decisions that charge nothing (an empty Usage and no settlement: roots
// lists, elicitations decided again after approval) need not come through
// here, and take no turn. That is exact: a budget is spent only by the
// charges committed against it, each of which is committed either here, on
// the usage as it stands when it commits, or by Commit, which on
// PostgreSQL waits for the server's turn and on SQLite is seen by every
// Charge that commits after it (see commitCharged). A decision that adds
// nothing cannot spend what another one was counting on, whatever usage it
// read: the reservation it relies on was charged when its request was
// first decided. Nor can a release (releaseOnClose, outside any turn): it
// only lowers the usage others decided on.
func (r *UsageReader) Charge(ctx context.Context, server string, decide func(map[string]Usage) (Entry, error)) (Item, error) {
	return r.ChargeFor(ctx, server, "", decide)
}

// ChargeFor is Charge for a later decision on a request whose first
// decision, reservation, charged the server already (its re-decision
// after an approval, which may reserve it again: Settlement.Reserve):
// decide sees the server's usage without that decision's charge, as the
// first decision saw the usage without its own, so that a request is never
// counted against itself. With reservation "" it is Charge.
func (r *UsageReader) ChargeFor(ctx context.Context, server, reservation string, decide func(map[string]Usage) (Entry, error)) (Item, error) {
	l := r.ledger
	unlock, err := l.serverLocks.Take(ctx, server)
	if err != nil {
		return Item{}, fmt.Errorf("usage of %s: %w", server, err)
	}
	defer unlock()
	v := usageView{r: r, server: server, except: reservation}
	if l.db.dialect != dialectPostgres {
		return v.chargeChecked(ctx, decide)
	}
	p, err := l.chargeLocked(ctx, server, v.readIn, func(usage map[string]Usage) (pendingEntry, error) {
		return l.chargeEntry(ctx, server, usage, decide)
	})
	if err != nil {
		return Item{}, err
	}
	l.opened(p)
	return p.item, nil
}

// usageView is the usage a charge to server decides on: all of it, or,
// for a later decision on a request, all but the charge of the request's
// first decision (except).
type usageView struct {
	r      *UsageReader
	server string
	except string
}

// seen is the usage the view shows, from the row of sums read at at; the
// excepted decision's charge is read through q, in the same transaction
// as the sums when there is one.
func (v usageView) seen(ctx context.Context, q rowReader, sums []int64, at time.Time) (map[string]Usage, error) {
	if v.except == "" {
		return v.r.usage(sums), nil
	}
	c, ok, err := readCharge(ctx, q, v.server, v.except)
	if err != nil {
		return nil, fmt.Errorf("usage of %s: %w", v.server, err)
	}
	if ok {
		sums = v.r.without(sums, c, at)
	}
	return v.r.usage(sums), nil
}

// readIn is the view read inside tx, at time at.
func (v usageView) readIn(ctx context.Context, tx *writeTx, server string, at time.Time) (map[string]Usage, error) {
	sums, err := v.r.scan(tx.StmtContext(ctx, v.r.stmt).QueryRowContext(ctx, v.r.args(server, at)...), server)
	if err != nil {
		return nil, err
	}
	return v.seen(ctx, tx, sums, at)
}

// chargeChecked is Charge on SQLite, where the only lock other processes
// sharing the file respect is the file's write lock, and holding that
// while a policy evaluates would queue every server's decisions, in every
// process, behind each evaluation. So the read and the evaluation run
// outside it (this Store's charges to the server already wait their turn,
// in serverLocks), and the write stores the decision only if the server's
// usage, over the same windows ending at the same instant, still sums to
// what decide saw: nothing was charged in between. A plain decision is one
// conditional INSERT (insertUnchanged). Otherwise, when the entry opens a
// review or the sums moved, one write transaction reads the usage again
// and, if another process charged the server meanwhile, runs decide once
// more on the new sums, under the file's lock, where nothing else can come
// between. A second evaluation happens only when two processes charge one
// server at the same moment.
func (v usageView) chargeChecked(ctx context.Context, decide func(map[string]Usage) (Entry, error)) (Item, error) {
	r, server := v.r, v.server
	l := r.ledger
	at := l.now()
	sums, err := r.scan(r.stmt.QueryRowContext(ctx, r.args(server, at)...), server)
	if err != nil {
		return Item{}, err
	}
	usage, err := v.seen(ctx, l.db, sums, at)
	if err != nil {
		return Item{}, err
	}
	p, err := l.chargeEntry(ctx, server, usage, decide)
	if err != nil {
		return Item{}, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if p.item.ID == "" && p.entry.Settles == nil {
		stored, err := r.insertUnchanged(wctx, p.entry, server, at, sums)
		if err != nil {
			return Item{}, p.failed(err)
		}
		if stored {
			return Item{}, nil
		}
	}
	if p, err = v.chargeInWrite(ctx, wctx, at, sums, p, decide); err != nil {
		return Item{}, err
	}
	l.opened(p)
	return p.item, nil
}

// chargeInWrite writes p in one write transaction that first sums the
// server's usage again: if it moved from sums, p is decided afresh on the
// new sums before it is written. decide runs under ctx, the write under
// wctx.
func (v usageView) chargeInWrite(ctx, wctx context.Context, at time.Time, sums []int64, p pendingEntry, decide func(map[string]Usage) (Entry, error)) (pendingEntry, error) {
	r, server := v.r, v.server
	l := r.ledger
	insert, err := l.insertStmt(wctx)
	if err != nil {
		return pendingEntry{}, p.failed(l.storageError(err, 0))
	}
	err = l.write(wctx, func(tx *writeTx) error {
		now, err := r.scan(tx.StmtContext(wctx, r.stmt).QueryRowContext(wctx, r.args(server, at)...), server)
		if err != nil {
			return err
		}
		if !slices.Equal(now, sums) {
			usage, err := v.seen(wctx, tx, now, at)
			if err != nil {
				return err
			}
			if p, err = l.chargeEntry(ctx, server, usage, decide); err != nil {
				return errDecide{err}
			}
		}
		return l.insertEntry(wctx, tx, p.entry, p.item, insert)
	})
	if de, ok := errors.AsType[errDecide](err); ok {
		return pendingEntry{}, de.err
	}
	if err != nil {
		return pendingEntry{}, p.failed(err)
	}
	return p, nil
}

// insertUnchanged stores e's decision with its usage, as insertDecision
// does, only if the server's usage over r's windows ending at at still
// sums to sums, and reports whether it did. It is one statement, which
// SQLite runs as one write transaction begun before its first read, so the
// check and the insert see the same database.
func (r *UsageReader) insertUnchanged(ctx context.Context, e Entry, server string, at time.Time, sums []int64) (bool, error) {
	l := r.ledger
	stmt, err := r.unchangedStmt(ctx)
	if err != nil {
		return false, l.storageError(err, 0)
	}
	args := decisionArgs(e.Decision, e.Usage)
	for _, v := range sums {
		args = append(args, v)
	}
	args = append(args, r.args(server, at)...)
	start := time.Now()
	l.wmu.Lock()
	res, err := stmt.ExecContext(ctx, args...)
	l.wmu.Unlock()
	if err != nil {
		return false, l.storageError(err, time.Since(start))
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// unchangedStmt is insertUnchanged's statement, prepared on first use; a
// failed prepare is not kept.
func (r *UsageReader) unchangedStmt(ctx context.Context) (*sql.Stmt, error) {
	r.unchangedMu.Lock()
	defer r.unchangedMu.Unlock()
	if r.unchanged != nil {
		return r.unchanged, nil
	}
	stmt, err := r.ledger.db.PrepareContext(ctx, r.insertUnchangedSQL())
	if err != nil {
		return nil, err
	}
	r.unchanged = stmt
	return stmt, nil
}

// insertUnchangedSQL inserts a decision (insertDecision's arguments) when
// the row of usage sums (one argument each, then the usage query's own)
// is what the usage query returns now.
func (q usageQuery) insertUnchangedSQL() string {
	return `INSERT INTO decisions (` + decisionColumns + `) SELECT ?,?,?,?,?,?,?,?,?,?,?
	WHERE (?` + strings.Repeat(",?", 4*len(q.names)) + `) = (` + q.query + `)`
}

// errDecide carries decide's own error out of a write transaction, so it
// is returned as decide returned it.
type errDecide struct{ err error }

func (e errDecide) Error() string { return e.err.Error() }

// chargeLocked is Charge on PostgreSQL (and Commit of a charge there): one
// transaction that first takes the server's advisory lock, then reads the
// usage (read nil: none), lets decide make the entry and writes it. Any
// other replica's charge to the server waits on the same lock, and the
// read, a statement begun after the lock was granted, sees every charge
// committed before. The lock is not taken in the statement that reads:
// that statement's snapshot would predate the grant.
//
// The transaction holds one pooled connection from BEGIN to COMMIT and
// never asks the pool for another (the insert is prepared before it
// begins; decide does not touch the store), and this Store's other
// charges to the server wait in serverLocks rather than on the lock, each
// holding a connection: waiters filling the pool could otherwise starve
// the holder. The global write lock, needed only when the entry opens a
// review, is taken after the server's, always in that order.
func (l *ledger) chargeLocked(ctx context.Context, server string, read usageRead, decide func(map[string]Usage) (pendingEntry, error)) (pendingEntry, error) {
	insert, err := l.insertStmt(ctx)
	if err != nil {
		return pendingEntry{}, fmt.Errorf("usage of %s: %w", server, l.unavailable("charge", err))
	}
	// The transaction outlives ctx: a decision made is recorded even when
	// its request is cancelled meanwhile (database/sql rolls back a
	// transaction whose context ends).
	sqlTx, err := l.begin(context.WithoutCancel(ctx))
	if err != nil {
		return pendingEntry{}, fmt.Errorf("usage of %s: %w", server, l.unavailable("charge", err))
	}
	tx := &writeTx{Tx: sqlTx, binder: l.db.binder}
	defer tx.Rollback()
	if err := lockServer(ctx, tx, server); err != nil {
		return pendingEntry{}, fmt.Errorf("usage of %s: %w", server, l.unavailable("charge", err))
	}
	var seen map[string]Usage
	if read != nil {
		if seen, err = read(ctx, tx, server, l.now()); err != nil {
			return pendingEntry{}, err
		}
	}
	p, err := decide(seen)
	if err != nil {
		return pendingEntry{}, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := l.writeLocked(wctx, tx, p, insert); err != nil {
		return pendingEntry{}, p.failed(l.unavailable("charge", err))
	}
	return p, nil
}

// usageRead reads a server's usage inside a transaction.
type usageRead func(ctx context.Context, tx *writeTx, server string, at time.Time) (map[string]Usage, error)

// writeLocked writes p inside tx, which holds its server's lock, and
// commits.
func (l *ledger) writeLocked(ctx context.Context, tx *writeTx, p pendingEntry, insert *sql.Stmt) error {
	if p.item.ID != "" {
		if err := l.lockWrites(ctx, tx); err != nil {
			return err
		}
	}
	if err := l.insertEntry(ctx, tx, p.entry, p.item, insert); err != nil {
		return err
	}
	return l.commit(tx)
}

// chargeEntry runs decide on usage and readies its entry for the write.
func (l *ledger) chargeEntry(ctx context.Context, server string, usage map[string]Usage, decide func(map[string]Usage) (Entry, error)) (pendingEntry, error) {
	e, err := decide(usage)
	if err != nil {
		return pendingEntry{}, err
	}
	if e.Decision.Server != server {
		return pendingEntry{}, fmt.Errorf("commit decision %s: it is %q's, charged in %q's turn", e.Decision.ID, e.Decision.Server, server)
	}
	return l.opening(ctx, e)
}

// serverLockClass is the first key of every server's advisory lock on
// PostgreSQL: the letters "mcpx" as a number. Locks keyed by two int4s are
// a key space of their own, apart from the single int8 key of lockWrites,
// so no server's lock is ever the write lock.
const serverLockClass = 0x6d637078

// serverLockKey is the second key of server's advisory lock: FNV-1a of its
// name, the same in every replica and every version of mcpx-fw (a changed
// key would let two versions charge one server at once during an
// upgrade). Two servers whose names collide share a lock, which costs
// only waiting.
func serverLockKey(server string) int32 {
	h := fnv.New32a()
	h.Write([]byte(server))
	return int32(h.Sum32())
}

// lockServer takes server's advisory lock for the rest of tx. It waits
// under ctx: a request cancelled while it waits stops waiting.
func lockServer(ctx context.Context, tx *writeTx, server string) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?, ?)", int32(serverLockClass), serverLockKey(server))
	return err
}
