package engine

import (
	"testing"
	"time"
)

// waitFor polls cond until it holds, and fails the test if it does not
// within the given time: what the engine does in the background (polling
// a bundle service, shipping a log) is waited for this way, never slept
// for.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
