package review

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// reviewChannel is the PostgreSQL notification channel every transition
// of an item is announced on, with the item's id as payload (migration 6's
// history_notify trigger). One channel for the whole database: a Store
// whose schema does not hold the id only re-reads and finds nothing new.
const reviewChannel = "mcpxfw_review"

// DefaultListenPollInterval is how often a waiter on PostgreSQL still polls
// its item: a safety net only, since every replica's transition wakes it at
// once through the listener (listen.go).
const DefaultListenPollInterval = 2 * time.Second

// Listener reconnection backoff: from listenBackoffMin, doubled per
// failure up to listenBackoffMax.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// listener is, on PostgreSQL, this Store's LISTEN connection: it wakes
// the waiters of every item whose transition any replica or CLI commits.
// It touches its own connection and the wake-ups, never a table.
type listener struct {
	*storage
	*replica
	*wakeups
	listenOnce  sync.Once
	readyOnce   sync.Once
	listenReady chan struct{}
	// presence is the lease id whose presence lock the listener's
	// connection holds (presence.go); "" holds none.
	presence string
}

// Changed returns a channel that is closed at the next committed change of
// any item this Store learns of at once: on PostgreSQL every replica's and
// every CLI's (the listener), on SQLite only this Store's own (decisions
// made by other processes are seen by polling). A caller that waits on
// many items (relay's one poll per process) re-reads them when it closes
// instead of only every PollInterval, so a decision made on one replica
// reaches the replica that waits within one round trip; it takes the
// channel before it reads, so a change made during the read is not
// missed. The channel is also closed after the listener reconnects, since
// notifications sent while it was away are lost.
func (l *listener) Changed() <-chan struct{} {
	l.startListening(context.Background())
	return l.current()
}

// startListening starts the Store's listener on its first use (a Store
// that never waits, the operator's CLI, holds no extra connection) and
// returns once it listens, or its first attempt failed, or ctx ended: a
// waiter that reads its item after this misses no notification of a
// later change. Without a listener (SQLite, or a closed Store) it returns
// at once.
func (l *listener) startListening(ctx context.Context) {
	if l.db.dialect != dialectPostgres || l.bgCtx.Err() != nil {
		return // SQLite, or a closed Store
	}
	l.listenOnce.Do(func() {
		l.bg.Go(func() { l.listen(l.bgCtx) })
	})
	select {
	case <-l.listenReady:
	case <-ctx.Done():
	}
}

// listen holds one connection that LISTENs on reviewChannel and wakes this
// Store's waiters on each notified item, until the Store closes. A lost
// connection is dialled again with backoff; once listening again, it wakes
// every waiter, because what was notified meanwhile is gone.
func (l *listener) listen(ctx context.Context) {
	ready := func() {
		l.readyOnce.Do(func() { close(l.listenReady) })
	}
	defer ready()
	backoff := listenBackoffMin
	for attempt := 0; ctx.Err() == nil; attempt++ {
		err := l.listenOnceConn(ctx, func() {
			ready()
			backoff = listenBackoffMin
			if attempt > 0 {
				l.log.Info("review store listener reconnected; waking every waiter",
					zap.String("backend", l.Backend()), zap.String("store", l.path))
				l.wakeAll()
			}
		})
		if ctx.Err() != nil {
			return
		}
		ready() // the first attempt failed: waiters poll until it works
		l.log.Warn("review store listener lost its connection; waits fall back to polling until it is back",
			zap.String("backend", l.Backend()), zap.String("store", l.path),
			zap.Duration("retry_in", backoff), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenOnceConn connects, listens, calls listening, then delivers
// notifications until the connection fails or ctx ends. A connection
// whose server vanished without closing it (a failover, a dropped route)
// delivers nothing and reports no error until the kernel gives up, many
// minutes later; so after each lease/3 without a notification the
// listener pings, and one unanswered within lease/8 counts as lost.
func (l *listener) listenOnceConn(ctx context.Context, listening func()) error {
	conn, err := pgx.Connect(ctx, l.connURL)
	if err != nil {
		return err // listen logs it, with when it tries again
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if err := l.listenOn(ctx, conn); err != nil {
		return err
	}
	listening()
	for {
		wctx, cancel := context.WithTimeout(ctx, l.lease/3)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil && n.Channel == handoverChannel:
			l.wake(handoverWakeKey(n.Payload))
		case err == nil:
			l.notify(n.Payload)
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded): // quiet: is anyone there?
			pctx, cancel := context.WithTimeout(ctx, l.lease/8)
			err := conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				return err
			}
		default:
			return err
		}
	}
}

// listenOn listens on conn for the items' and the handovers' channels and
// takes this Store's presence lock there, held while the connection lasts.
// The lock is tried, not waited for: a lease whose key another's hash
// shares is told apart by its lease (HolderAlive).
func (l *listener) listenOn(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(ctx, "LISTEN "+reviewChannel+"; LISTEN "+handoverChannel); err != nil {
		return err
	}
	if l.presence == "" {
		return nil
	}
	_, err := conn.Exec(ctx, "SELECT pg_try_advisory_lock($1::int, $2::int)", int32(presenceClass), int32(presenceKey(l.presence)))
	return err
}
