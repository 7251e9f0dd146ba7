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
func (s *Store) Wait(ctx context.Context, id string) (Item, error) {
	s.startListening(ctx)
	tick := time.NewTicker(s.pollInterval())
	defer tick.Stop()
	due := s.takeDue(id) // the deadline on the monotonic clock; zero until the first read if unknown
	for {
		if ctx.Err() != nil {
			return s.cancelled(ctx, id)
		}
		it, done, err := s.waitOnce(ctx, id, tick.C, &due)
		if err != nil && ctx.Err() != nil {
			return s.cancelled(ctx, id)
		}
		if done || err != nil {
			return it, err
		}
		if !time.Now().Before(due) {
			return s.overdue(ctx, it, due)
		}
	}
}

// waitOnce reads the item and, if it is still pending, sleeps until a
// local wake-up, the next poll, its deadline or the end of ctx. It listens
// before reading, so a decision committed in between is not missed. The
// first read that finds it pending sets *due.
func (s *Store) waitOnce(ctx context.Context, id string, tick <-chan time.Time, due *time.Time) (Item, bool, error) {
	slot := s.subscribe(id)
	defer s.unsubscribe(id, slot)
	it, err := s.Get(ctx, id)
	if err != nil || it.State != StatePending {
		return it, true, err
	}
	left := it.ExpiresAt.Sub(s.now())
	if due.IsZero() {
		// Read after s.now, so this deadline falls just after the wall
		// clock's: an unstepped clock expires the item the usual way.
		*due = time.Now().Add(left) // time.Now carries the monotonic reading
	}
	deadline := time.NewTimer(min(left, time.Until(*due)))
	defer deadline.Stop()
	if s.blocked != nil {
		s.blocked(id)
	}
	select {
	case <-ctx.Done():
	case <-slot.ch:
	case <-tick:
	case <-deadline.C: // the next Get expires it, or Wait does
	}
	return it, false, nil
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

// setDue remembers the monotonic deadline of an item this Store opened.
func (s *Store) setDue(id string, due time.Time) {
	s.dueMu.Lock()
	defer s.dueMu.Unlock()
	s.dues[id] = due
}

// takeDue returns, and forgets, the monotonic deadline of an item this
// Store opened; zero for any other. The item's waiter takes it once.
func (s *Store) takeDue(id string) time.Time {
	s.dueMu.Lock()
	defer s.dueMu.Unlock()
	due := s.dues[id]
	delete(s.dues, id)
	return due
}

// waitSlot is the wake-up channel shared by this Store's waiters on one
// item; refs counts them so the last one out removes it from the map.
type waitSlot struct {
	ch   chan struct{}
	refs int
}

func (s *Store) subscribe(id string) *waitSlot {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	slot := s.waiters[id]
	if slot == nil {
		slot = &waitSlot{ch: make(chan struct{})}
		s.waiters[id] = slot
	}
	slot.refs++
	return slot
}

func (s *Store) unsubscribe(id string, slot *waitSlot) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	slot.refs--
	if slot.refs == 0 && s.waiters[id] == slot {
		delete(s.waiters, id)
	}
}

// notify wakes this Store's waiters on id after a committed change, and
// whoever waits on Changed.
func (s *Store) notify(id string) {
	s.waitMu.Lock()
	if slot := s.waiters[id]; slot != nil {
		close(slot.ch)
		delete(s.waiters, id)
	}
	s.waitMu.Unlock()
	s.signalChanged()
}
