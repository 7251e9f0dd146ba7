package turn

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// TestOneTurnPerKey: while one caller holds a key's turn, a second waits
// for it and a caller of another key does not; the waiter gets the turn
// once it is released, and no entry outlives its last user.
func TestOneTurnPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Turns
		release, err := l.Take(t.Context(), "a")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan func(), 1)
		go func() {
			r, _ := l.Take(t.Context(), "a")
			got <- r
		}()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("a second caller took a's turn while it was held")
		default:
		}
		other, err := l.Take(t.Context(), "b")
		if err != nil {
			t.Fatal(err)
		}
		other()
		release()
		(<-got)()
		if n := len(l.locks); n != 0 {
			t.Errorf("%d keys remain after every turn ended, want 0", n)
		}
	})
}

// TestTakeStopsWithItsContext: a caller whose context ends while it waits
// gets the context's error and leaves the key's turn as it was.
func TestTakeStopsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Turns
		release, err := l.Take(t.Context(), "a")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := l.Take(ctx, "a")
			done <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Take = %v, want context.Canceled", err)
		}
		if u := l.locks["a"].users; u != 1 {
			t.Errorf("a has %d users after the waiter left, want the holder alone", u)
		}
		release()
	})
}
