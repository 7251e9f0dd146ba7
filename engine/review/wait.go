package review

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// cancelWriteTimeout bounds the write that abandons an item after the
// waiter's context ended; that context can no longer carry it.
const cancelWriteTimeout = 5 * time.Second

// Wait blocks until the item is no longer pending and returns it. It wakes
// at once for a decision made through this Store and polls every
// PollInterval for one made by another process. At the deadline it marks
// the item expired, unless a decision won the race.
//
// When ctx ends first (the upstream cancelled the sampling request, or
// serve is stopping), Wait marks a still-pending item abandoned, so nobody
// approves a request that no longer exists, and returns the item as stored
// with an error wrapping ctx.Err().
func (s *Store) Wait(ctx context.Context, id string) (Item, error) {
	tick := time.NewTicker(s.pollInterval())
	defer tick.Stop()
	for {
		if ctx.Err() != nil {
			return s.cancelled(ctx, id)
		}
		it, done, err := s.waitOnce(ctx, id, tick.C)
		if err != nil && ctx.Err() != nil {
			return s.cancelled(ctx, id)
		}
		if done || err != nil {
			return it, err
		}
	}
}

// waitOnce reads the item and, if it is still pending, sleeps until a
// local wake-up, the next poll, its deadline or the end of ctx. It listens
// before reading, so a decision committed in between is not missed.
func (s *Store) waitOnce(ctx context.Context, id string, tick <-chan time.Time) (Item, bool, error) {
	slot := s.subscribe(id)
	defer s.unsubscribe(id, slot)
	it, err := s.Get(ctx, id)
	if err != nil || it.State != StatePending {
		return it, true, err
	}
	deadline := time.NewTimer(time.Until(it.ExpiresAt))
	defer deadline.Stop()
	select {
	case <-ctx.Done():
	case <-slot.ch:
	case <-tick:
	case <-deadline.C: // the next Get expires it
	}
	return it, false, nil
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
	it, err := s.abandon(wctx, id, NoteCancelled)
	if errors.Is(err, ErrNotFound) {
		return Item{}, err
	}
	if err != nil {
		return Item{}, fmt.Errorf("wait %s: %w (and abandoning it failed: %v)", id, ctx.Err(), err)
	}
	return it, fmt.Errorf("wait %s: %w", id, ctx.Err())
}

// abandon closes a pending item with note, after applying any expiry or
// abandonment already due. It returns the item as stored.
func (s *Store) abandon(ctx context.Context, id, note string) (Item, error) {
	var it Item
	var changed bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if it, err = load(ctx, tx, id); err != nil {
			return err
		}
		t := now()
		if it, changed, err = s.settle(ctx, tx, it, t); err != nil || it.State != StatePending {
			return err
		}
		changed = true
		it, err = s.closeItem(ctx, tx, it, closing{StateAbandoned, note, t})
		return err
	})
	if err != nil {
		return Item{}, err
	}
	if changed {
		s.closed(it)
	}
	return it, nil
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

// notify wakes this Store's waiters on id after a committed change.
func (s *Store) notify(id string) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if slot := s.waiters[id]; slot != nil {
		close(slot.ch)
		delete(s.waiters, id)
	}
}
