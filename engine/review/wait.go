package review

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// cancelWriteTimeout bounds the write that abandons an item after the
// waiter's context ended; that context can no longer carry it.
const cancelWriteTimeout = 5 * time.Second

// Wait blocks until the item is no longer pending and returns it. It wakes
// at once for a decision made through this Store, on PostgreSQL also for
// one made by any other replica or CLI (listen.go), and polls every
// PollInterval for one made by another process. At the deadline it marks
// the item expired, unless a decision won the race.
//
// The deadline is stored as wall-clock time, which every process reads
// the same; Wait also holds it on this process's monotonic clock: from
// when this Store opened the item, or else from Wait's first read of it. A
// wall clock stepped forward expires the item early (nobody can approve
// what the clock calls overdue); one stepped back does not extend it: the
// item expires once its timeout has really passed, whatever the wall clock
// says.
//
// When ctx ends first (the upstream cancelled the sampling request, or
// serve is stopping), Wait marks a still-pending item abandoned, so nobody
// approves a request that no longer exists, and returns the item as stored
// with an error wrapping ctx.Err().
//
// A read that fails because the database server is away (a restart, a
// failover: ErrUnavailable or a lost connection) does not end the wait:
// it is logged once and tried again at the next wake-up or poll, so a
// decision made meanwhile is still delivered, once. The deadline holds all
// the same: when it passes, Wait expires the item, and returns that
// write's error if the server is still away.
func (s *Store) Wait(ctx context.Context, id string) (Item, error) {
	s.startListening(ctx)
	tick := time.NewTicker(s.pollInterval())
	defer tick.Stop()
	// The deadline on the monotonic clock; zero until the first read if unknown.
	w := &waiting{it: Item{ID: id}, due: s.dues.take(id)}
	for {
		if ctx.Err() != nil {
			return s.cancelled(ctx, id)
		}
		done, err := s.waitOnce(ctx, w, tick.C)
		if err != nil && ctx.Err() != nil {
			return s.cancelled(ctx, id)
		}
		if err != nil {
			return Item{}, err
		}
		if done {
			return w.it, nil
		}
		if !w.due.IsZero() && !time.Now().Before(w.due) {
			return s.overdue(ctx, w.it, w.due)
		}
	}
}

// waiting is one Wait's state between its reads.
type waiting struct {
	it     Item      // the item as last read; only its ID before the first read
	due    time.Time // the deadline on the monotonic clock; zero while unknown
	unread bool      // the last read failed because the server was away (logged)
}

// waitOnce reads the item and, if it is still pending, sleeps until a
// local wake-up, the next poll, its deadline or the end of ctx. It listens
// before reading, so a decision committed in between is not missed. The
// first read that finds it pending sets w.due. A read that fails because
// the server is away (serverAway) sleeps the same way, and reports no
// error.
func (s *Store) waitOnce(ctx context.Context, w *waiting, tick <-chan time.Time) (bool, error) {
	id := w.it.ID
	slot := s.subscribe(id)
	defer s.unsubscribe(id, slot)
	var left time.Duration
	it, err := s.Get(ctx, id)
	switch {
	case err != nil && ctx.Err() == nil && s.serverAway(err):
		s.readFailed(w, err)
		if w.due.IsZero() {
			left = -1 // no deadline known yet: the next read learns it
		} else {
			left = time.Until(w.due)
		}
	case err != nil || it.State != StatePending:
		w.it = it
		return true, err
	default:
		w.it, w.unread = it, false
		left = it.ExpiresAt.Sub(s.now())
		if w.due.IsZero() {
			// Read after s.now, so this deadline falls just after the wall
			// clock's: an unstepped clock expires the item the usual way.
			w.due = time.Now().Add(left) // time.Now carries the monotonic reading
		}
		left = min(left, time.Until(w.due))
	}
	var deadline <-chan time.Time
	if left >= 0 {
		t := time.NewTimer(left)
		defer t.Stop()
		deadline = t.C
	}
	if s.blocked != nil {
		s.blocked(id)
	}
	select {
	case <-ctx.Done():
	case <-slot.ch:
	case <-tick:
	case <-deadline: // the next Get expires it, or Wait does
	}
	return false, nil
}

// serverAway reports a failed read that says the PostgreSQL server cannot
// be reached now (unavailable.go): a later read may well succeed.
func (s *Store) serverAway(err error) bool {
	return errors.Is(err, ErrUnavailable) || (s.db.dialect == dialectPostgres && unreachable(err))
}

// readFailed logs the first of a run of reads that failed because the
// server was away.
func (s *Store) readFailed(w *waiting, err error) {
	if w.unread {
		return
	}
	w.unread = true
	s.log.Warn("review store unavailable while waiting on a review: reading it again at the next wake-up",
		zap.String("backend", s.Backend()), zap.String("store", s.path), zap.String("review_id", w.it.ID), zap.Error(err))
}

// overdue expires a still-pending item whose deadline has passed on the
// monotonic clock. Usually the wall clock agrees and the item expires as
// any reader would expire it; if the wall clock says time is left, it was
// set back while the item waited, and the item expires now all the same.
func (s *Store) overdue(ctx context.Context, it Item, due time.Time) (Item, error) {
	got, forced, err := s.closePending(ctx, it.ID, closing{to: StateExpired, note: NoteExpired})
	if forced {
		s.log.Warn("review timeout passed but the wall clock says it has not: the clock was set back; expired it",
			append(itemFields(got), zap.Time("expires_at", it.ExpiresAt), zap.Duration("overdue", time.Since(due)),
				zap.Duration("wall_clock_says_left", it.ExpiresAt.Sub(got.DecidedAt)))...)
	}
	return got, err
}

func (s *Store) pollInterval() time.Duration {
	if s.PollInterval > 0 {
		return s.PollInterval
	}
	return DefaultPollInterval
}

// cancelled abandons a still-pending item after its waiter's ctx ended.
func (s *Store) cancelled(ctx context.Context, id string) (Item, error) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWriteTimeout)
	defer cancel()
	it, _, err := s.closePending(wctx, id, closing{to: StateAbandoned, note: NoteCancelled})
	if errors.Is(err, ErrNotFound) {
		return Item{}, err
	}
	if err != nil {
		return Item{}, fmt.Errorf("wait %s: %w (and abandoning it failed: %v)", id, ctx.Err(), err)
	}
	return it, fmt.Errorf("wait %s: %w", id, ctx.Err())
}

// closePending closes a pending item as c says, at the present time,
// unless an expiry or abandonment already due closes it first. It returns
// the item as stored, and whether c closed it.
func (s *Store) closePending(ctx context.Context, id string, c closing) (Item, bool, error) {
	var it Item
	var settled, closed bool
	err := s.write(ctx, func(tx *writeTx) error {
		var err error
		if it, err = load(ctx, tx, id); err != nil {
			return err
		}
		t := s.now()
		if it, settled, err = s.settle(ctx, tx, it, t); err != nil || it.State != StatePending {
			return err
		}
		closed, c.at = true, t
		it, err = s.closeItem(ctx, tx, it, c)
		return err
	})
	if err != nil {
		return Item{}, false, err
	}
	if settled || closed {
		s.closed(it)
	}
	return it, closed, nil
}
