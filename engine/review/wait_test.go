package review

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestWaitSeesAnotherProcessDecide is serve waiting and the CLI approving
// from another process: the waiter sees the decision by polling.
func TestWaitSeesAnotherProcessDecide(t *testing.T) {
	dir := stateDir(t)
	synctest.Test(t, func(t *testing.T) {
		serve, cli := openStore(t, dir), openStore(t, dir)
		serve.PollInterval = 20 * time.Millisecond
		it := mustAdd(t, serve, sampleItem("everything"), time.Hour)

		type result struct {
			it  Item
			err error
		}
		done := make(chan result, 1)
		go func() {
			got, err := serve.Wait(t.Context(), it.ID)
			done <- result{got, err}
		}()
		synctest.Wait() // the waiter has read its item pending and polls
		start := time.Now()
		if _, err := cli.Approve(t.Context(), it.ID, "alice", ""); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			if r.err != nil || r.it.State != StateApproved || r.it.DecidedBy != "alice" {
				t.Fatalf("Wait: %s by %q, %v; want approved by alice", r.it.State, r.it.DecidedBy, r.err)
			}
			t.Logf("waiter saw the decision after %v", time.Since(start))
		case <-time.After(time.Second):
			t.Fatal("waiter did not see another process's approval within a second")
		}
	})
}

// TestWaitWakesAtOnceInProcess: a decision through the waiter's own Store
// wakes it without waiting for a poll (the poll interval here is an hour of
// fake time, and no fake time may pass).
func TestWaitWakesAtOnceInProcess(t *testing.T) {
	inBubble(t, func(t *testing.T, s *Store) {
		s.PollInterval = time.Hour
		it := mustAdd(t, s, sampleItem("everything"), 2*time.Hour)
		done := make(chan Item, 1)
		go func() {
			got, _ := s.Wait(t.Context(), it.ID)
			done <- got
		}()
		synctest.Wait() // the waiter is blocked
		start := time.Now()
		if _, err := s.Reject(t.Context(), it.ID, "bob", "no"); err != nil {
			t.Fatal(err)
		}
		got := <-done
		if got.State != StateRejected || time.Since(start) != 0 {
			t.Errorf("Wait returned %s after %v of fake time; want rejected at once", got.State, time.Since(start))
		}
	})
}

func TestWaitExpires(t *testing.T) {
	inBubble(t, func(t *testing.T, s *Store) {
		s.PollInterval = time.Hour // expiry must come from the deadline, not a poll
		it := mustAdd(t, s, sampleItem("everything"), 50*time.Millisecond)
		got, err := s.Wait(t.Context(), it.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != StateExpired || !got.DecidedAt.Equal(it.ExpiresAt) || got.Note != NoteExpired {
			t.Errorf("Wait: %s at %v note %q; want expired at %v", got.State, got.DecidedAt, got.Note, it.ExpiresAt)
		}
		if elapsed := time.Since(it.CreatedAt); elapsed != 50*time.Millisecond {
			t.Errorf("Wait returned after %v, want exactly the 50ms timeout", elapsed)
		}
		_, err = s.Approve(t.Context(), it.ID, "alice", "")
		wantDecided(t, err, StateExpired, "expired at "+it.ExpiresAt.Format(time.RFC3339))
		wantHistory(t, s, it.ID, "", StatePending, StateExpired)
	})
}

// TestExpiryIsAppliedOnRead: with nobody waiting, an approval after the
// deadline still fails, and the deadline itself is already too late.
func TestExpiryIsAppliedOnRead(t *testing.T) {
	inBubble(t, func(t *testing.T, s *Store) {
		early := mustAdd(t, s, sampleItem("everything"), time.Minute)
		late := mustAdd(t, s, sampleItem("everything"), time.Minute)
		time.Sleep(time.Minute - time.Nanosecond)
		if _, err := s.Approve(t.Context(), early.ID, "alice", ""); err != nil {
			t.Errorf("Approve 1ns before the deadline: %v", err)
		}
		time.Sleep(time.Nanosecond)
		_, err := s.Approve(t.Context(), late.ID, "alice", "")
		wantDecided(t, err, StateExpired, "expired at")
		items, err := s.List(t.Context(), Filter{})
		if err != nil || len(items) != 0 {
			t.Errorf("List(pending) after the deadline: %d items, %v", len(items), err)
		}
	})
}

func TestWaitCancelledAbandons(t *testing.T) {
	t.Run("before waiting", func(t *testing.T) {
		inBubble(t, func(t *testing.T, s *Store) {
			it := mustAdd(t, s, sampleItem("everything"), time.Hour)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			wantCancelled(t, s, ctx, it.ID, context.Canceled)
		})
	})
	t.Run("while waiting", func(t *testing.T) {
		inBubble(t, func(t *testing.T, s *Store) {
			it := mustAdd(t, s, sampleItem("everything"), time.Hour)
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			wantCancelled(t, s, ctx, it.ID, context.DeadlineExceeded)
		})
	})
	t.Run("after approval", func(t *testing.T) {
		inBubble(t, func(t *testing.T, s *Store) {
			it := mustAdd(t, s, sampleItem("everything"), time.Hour)
			if _, err := s.Approve(t.Context(), it.ID, "alice", ""); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			got, err := s.Wait(ctx, it.ID)
			if !errors.Is(err, context.Canceled) || got.State != StateApproved {
				t.Errorf("Wait: %s, %v; want the approval kept and ctx's error", got.State, err)
			}
		})
	})
}

func wantCancelled(t *testing.T, s *Store, ctx context.Context, id string, cause error) {
	t.Helper()
	got, err := s.Wait(ctx, id)
	if !errors.Is(err, cause) {
		t.Errorf("Wait: %v, want %v", err, cause)
	}
	if got.State != StateAbandoned || got.Note != NoteCancelled {
		t.Errorf("Wait returned %s (%q), want abandoned (%q)", got.State, got.Note, NoteCancelled)
	}
	_, err = s.Approve(t.Context(), id, "alice", "")
	wantDecided(t, err, StateAbandoned, "abandoned at", NoteCancelled)
}

func TestWaitersLeaveNoSlots(t *testing.T) {
	inBubble(t, func(t *testing.T, s *Store) {
		it := mustAdd(t, s, sampleItem("everything"), time.Hour)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		for range 3 {
			go s.Wait(ctx, it.ID)
		}
		synctest.Wait()
		if n := slots(s); n != 1 {
			t.Errorf("3 waiters on one item hold %d slots, want 1", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := slots(s); n != 0 {
			t.Errorf("after the waiters left %d slots remain", n)
		}
	})
}

func slots(s *Store) int {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	return len(s.waiters)
}
