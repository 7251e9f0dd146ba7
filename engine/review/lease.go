package review

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// DefaultLease is how long a Store's lease on PostgreSQL lasts without a
// renewal (store.lease): how long a crashed replica's reviews stay pending
// before another replica abandons them.
const DefaultLease = 15 * time.Second

// leasePrefix starts the owner token of an item opened under a lease. An
// owner without it is a process id, written by a SQLite store or by an
// mcpx-fw from before leases; on PostgreSQL nobody can tell whether such a
// process still runs, so its items are left to their deadline.
const leasePrefix = "lease:"

// leaseReleaseTimeout bounds the delete that releases a Store's lease at
// Close.
const leaseReleaseTimeout = 5 * time.Second

// Why leases: on PostgreSQL the replicas sharing the queue run on several
// machines, where a process id names nothing. Each Store takes a lease (a
// random id with an expiry on the database's clock) when it opens, renews
// it every lease/3 and deletes it at Close, and owns the items it opens
// through it. A lease that has run out means its Store is gone or cut off
// from the database for longer than the lease: any replica then abandons
// its pending items and fails its approved ones (settle.go's rules, in one
// transaction each with its history row and audit entry), exactly once
// because the state machine and the write lock allow one close. A live
// Store's items are never touched, since its lease never runs out.

// leases is this Store's lease on PostgreSQL: taking it, renewing it on
// its own connection, releasing it at Close, and the heartbeat that sweeps
// the items of leases that ran out. It touches the leases table and its
// own connection; the sweep itself is the queue's (abandon).
type leases struct {
	*storage
	*replica
	// id is the lease's id: the owner token of every item this Store
	// opens.
	id string
	// leaseDB is the lease's own connection (openLeaseDB).
	leaseDB *db
	// heartbeatStop ends the heartbeat without releasing the lease: what
	// a crash does, for tests.
	heartbeatStop context.CancelFunc
	// abandon is the heartbeat's sweep: the Store's AbandonOrphans.
	abandon func(context.Context) (int, error)
}

// newLeaseID returns a fresh owner token for a lease.
func newLeaseID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return leasePrefix + hex.EncodeToString(b)
}

// leaseHolder says, for an operator reading the leases table, which
// process holds a lease.
func leaseHolder() string {
	host, _ := os.Hostname()
	return host + " pid " + selfToken()
}

// leaseTries bounds the tries of one renewal (renewLease): the first may
// meet the lease's connection dead, the next ones dial afresh.
const leaseTries = 3

// openLeaseDB opens the lease's own pool of one connection, from the
// store's URL. The heartbeat never asks the shared pool: under a burst of
// escalations every pooled connection may be held by a charge waiting for
// a server's turn or the store-wide write lock, behind other replicas'
// writes, and a renewal queued behind them would time out, let a live
// replica's lease run out and the other replicas abandon its reviews.
// Renewals touch one row and never take the write lock, so one
// connection of their own never waits behind anything this Store does.
func openLeaseDB(connURL string) (*db, error) {
	sqlDB, err := sql.Open("pgx", connURL)
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(1)
	sqlDB.SetMaxIdleConns(1)
	return &db{DB: sqlDB, binder: newBinder(dialectPostgres)}, nil
}

// takeLease opens the lease's connection, writes this Store's lease and
// starts its heartbeat.
func (l *leases) takeLease(ctx context.Context) error {
	ldb, err := openLeaseDB(l.connURL)
	if err != nil {
		return err
	}
	_, err = ldb.ExecContext(ctx, `INSERT INTO leases (id, holder, taken_at, expires_at)
		VALUES (?, ?, clock_timestamp(), clock_timestamp() + make_interval(secs => ?))`,
		l.id, leaseHolder(), l.lease.Seconds())
	if err != nil {
		ldb.Close()
		return err
	}
	l.leaseDB = ldb
	hbCtx, stop := context.WithCancel(l.bgCtx)
	l.heartbeatStop = stop
	l.bg.Go(func() { l.heartbeat(hbCtx) })
	return nil
}

// heartbeat renews the lease every lease/3 and, each time, starts a sweep
// that closes the items of leases that ran out and whatever else is due,
// unless the last one is still running, until ctx ends. The sweep runs on
// its own goroutine: it waits for this Store's writes and the store-wide
// write lock, behind every replica's writes, and a renewal queued behind
// it would let a live replica's lease run out under load, and the other
// replicas abandon its reviews.
func (l *leases) heartbeat(ctx context.Context) {
	tick := time.NewTicker(l.lease / 3)
	defer tick.Stop()
	var sweeping atomic.Bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := l.renewLease(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("review store lease not renewed", zap.String("backend", l.Backend()),
				zap.String("store", l.path), zap.Error(err))
			continue
		}
		if sweeping.CompareAndSwap(false, true) {
			l.bg.Go(func() {
				defer sweeping.Store(false)
				l.sweepDeadLeases(ctx)
			})
		}
	}
}

// sweepDeadLeases is the heartbeat's sweep (abandon).
func (l *leases) sweepDeadLeases(ctx context.Context) {
	if _, err := l.abandon(ctx); err != nil && ctx.Err() == nil {
		l.log.Warn("review store sweep of dead leases failed", zap.String("backend", l.Backend()),
			zap.String("store", l.path), zap.Error(err))
	}
}

// renewLease pushes the lease's expiry on, each try bounded by lease/8,
// on the lease's own connection (openLeaseDB). A connection whose server
// vanished without closing it (a failover, a dropped route) answers
// nothing, and a renewal sent on it would wait until the kernel gives up,
// many minutes after the lease ran out; one that times out closes its
// connection, and the next try, at once, dials another. leaseTries tries
// still end within lease/3, before the next renewal is due.
func (l *leases) renewLease(ctx context.Context) error {
	var err error
	for range leaseTries {
		tctx, cancel := context.WithTimeout(ctx, l.lease/8)
		err = l.renewLeaseOnce(tctx)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	return err
}

// renewLeaseOnce is one try of renewLease. A lease that ran out before the
// renewal (the database was out of reach for longer than the lease) is
// taken again under the same id: other replicas may have abandoned some
// of its items meanwhile, and those stay abandoned; the rest go on.
func (l *leases) renewLeaseOnce(ctx context.Context) error {
	res, err := l.leaseDB.ExecContext(ctx, `UPDATE leases SET expires_at = clock_timestamp() + make_interval(secs => ?)
		WHERE id = ? AND expires_at > clock_timestamp()`, l.lease.Seconds(), l.id)
	if err != nil {
		return l.unavailable("renew lease", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return nil
	}
	l.log.Warn("review store lease had run out: other replicas may have abandoned the reviews this one held; taking it again",
		zap.String("backend", l.Backend()), zap.String("store", l.path), zap.Duration("lease", l.lease))
	_, err = l.leaseDB.ExecContext(ctx, `INSERT INTO leases (id, holder, taken_at, expires_at)
		VALUES (?, ?, clock_timestamp(), clock_timestamp() + make_interval(secs => ?))
		ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`,
		l.id, leaseHolder(), l.lease.Seconds())
	return l.unavailable("renew lease", err)
}

// releaseLease deletes the lease at Close, so other replicas abandon this
// Store's remaining items at their next sweep, and closes the lease's
// connection.
func (l *leases) releaseLease() {
	defer l.leaseDB.Close()
	ctx, cancel := context.WithTimeout(context.Background(), leaseReleaseTimeout)
	defer cancel()
	if _, err := l.leaseDB.ExecContext(ctx, "DELETE FROM leases WHERE id = ?", l.id); err != nil {
		l.log.Warn("review store lease not released; other replicas abandon its reviews when it runs out",
			zap.String("backend", l.Backend()), zap.String("store", l.path), zap.Error(err))
	}
}

// leaseAlive is s.alive on PostgreSQL: whether the lease that owns an item
// still holds, read through q. It answers true when it cannot tell (an
// owner that is not a lease, a failed read), as ownerAlive does.
func leaseAlive(ctx context.Context, q rowReader, owner string) bool {
	if !strings.HasPrefix(owner, leasePrefix) {
		return true
	}
	var alive bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM leases
		WHERE id = ? AND expires_at > clock_timestamp())`, owner).Scan(&alive)
	return err != nil || alive
}

// dropDeadLeases deletes the leases that ran out and own no open item any
// more: what is left of replicas that are gone.
func (l *leases) dropDeadLeases(ctx context.Context) error {
	_, err := l.db.ExecContext(ctx, `DELETE FROM leases WHERE expires_at <= clock_timestamp()
		AND NOT EXISTS (SELECT 1 FROM items WHERE items.owner = leases.id
			AND items.state IN ('pending', 'approved'))`)
	return err
}
