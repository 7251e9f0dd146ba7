package review

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// contPayload is binary on purpose: the relay's encoding is opaque here and
// must come back byte for byte.
var contPayload = []byte("{\"entries\":1}\x00\xff\xfe")

func sampleContinuation(nonce string) Continuation {
	return Continuation{Nonce: nonce, Server: "alpha", Call: "digest-1", Expires: now().Add(time.Hour), Payload: contPayload}
}

// TestContinuationTakenOnce: replicas (Stores on one dir: processes on one
// SQLite file, or replicas on one PostgreSQL database) race to take one
// continuation; exactly one gets it, byte for byte, and every other take,
// on any of them, finds it gone.
func TestContinuationTakenOnce(t *testing.T) {
	dir := stateDir(t)
	stores := []*Store{openStore(t, dir), openStore(t, dir), openStore(t, dir)}
	for round := range 5 {
		nonce := fmt.Sprintf("n-%d", round)
		if err := stores[round%3].PutContinuation(t.Context(), sampleContinuation(nonce)); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var got [][]byte
		var wg sync.WaitGroup
		for i := range 9 {
			wg.Go(func() {
				p, err := stores[i%3].TakeContinuation(t.Context(), nonce, "alpha", "digest-1")
				switch {
				case err == nil:
					mu.Lock()
					got = append(got, p)
					mu.Unlock()
				case !errors.Is(err, ErrContinuationGone):
					t.Errorf("take: %v, want ErrContinuationGone or the payload", err)
				}
			})
		}
		wg.Wait()
		if len(got) != 1 || !bytes.Equal(got[0], contPayload) {
			t.Fatalf("round %d: %d takes succeeded (%q); want exactly one, with the payload as put", round, len(got), got)
		}
	}
}

// TestContinuationBoundToCall: a nonce presented for another server or
// another call finds nothing, and leaves the row for its own call.
func TestContinuationBoundToCall(t *testing.T) {
	s := openStore(t, stateDir(t))
	if err := s.PutContinuation(t.Context(), sampleContinuation("n-1")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, server, call string }{
		{"another server", "beta", "digest-1"},
		{"another call", "alpha", "digest-2"},
		{"another nonce", "alpha", "digest-1"},
	} {
		nonce := "n-1"
		if tc.name == "another nonce" {
			nonce = "n-2"
		}
		if _, err := s.TakeContinuation(t.Context(), nonce, tc.server, tc.call); !errors.Is(err, ErrContinuationGone) {
			t.Errorf("%s: take = %v, want ErrContinuationGone", tc.name, err)
		}
	}
	if p, err := s.TakeContinuation(t.Context(), "n-1", "alpha", "digest-1"); err != nil || !bytes.Equal(p, contPayload) {
		t.Fatalf("take for its own call: %q, %v", p, err)
	}
}

// TestContinuationExpiry: an expired row is never taken, and the next put
// (or Prune) deletes it.
func TestContinuationExpiry(t *testing.T) {
	s := openStore(t, stateDir(t))
	base := now()
	s.clock = func() time.Time { return base }
	if err := s.PutContinuation(t.Context(), sampleContinuation("old")); err != nil {
		t.Fatal(err)
	}
	s.clock = func() time.Time { return base.Add(2 * time.Hour) }
	if _, err := s.TakeContinuation(t.Context(), "old", "alpha", "digest-1"); !errors.Is(err, ErrContinuationGone) {
		t.Fatalf("take after expiry = %v, want ErrContinuationGone", err)
	}
	if n := countContinuations(t, s); n != 1 {
		t.Fatalf("%d rows before the sweep, want the expired one", n)
	}
	fresh := sampleContinuation("new")
	fresh.Expires = base.Add(3 * time.Hour)
	if err := s.PutContinuation(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	if n := countContinuations(t, s); n != 1 {
		t.Fatalf("%d rows after a put, want only the new one", n)
	}
	s.clock = func() time.Time { return base.Add(4 * time.Hour) }
	if _, err := s.Prune(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if n := countContinuations(t, s); n != 0 {
		t.Fatalf("%d rows after Prune, want none", n)
	}
}

func countContinuations(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow("SELECT COUNT(*) FROM continuations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestContinuationRefused: a put without what binds the row, a nonce put
// twice, and a payload over the bound are refused.
func TestContinuationRefused(t *testing.T) {
	s := openStore(t, stateDir(t))
	if err := s.PutContinuation(t.Context(), sampleContinuation("n-1")); err != nil {
		t.Fatal(err)
	}
	unbound := sampleContinuation("n-2")
	unbound.Call = ""
	big := sampleContinuation("n-3")
	big.Payload = make([]byte, MaxContinuationBytes+1)
	for name, c := range map[string]Continuation{"no call": unbound, "nonce reused": sampleContinuation("n-1"), "too large": big} {
		if err := s.PutContinuation(t.Context(), c); err == nil {
			t.Errorf("%s: put succeeded", name)
		}
	}
	if err := s.PutContinuation(t.Context(), big); !errors.Is(err, ErrContinuationTooLarge) {
		t.Errorf("too large: %v, want ErrContinuationTooLarge", err)
	}
}

// TestHeldContinuations: which nonces still have a live row, across more
// than one batch of the query.
func TestHeldContinuations(t *testing.T) {
	dir := stateDir(t)
	s, other := openStore(t, dir), openStore(t, dir)
	var nonces []string
	for i := range 1200 {
		nonces = append(nonces, fmt.Sprintf("n-%04d", i))
	}
	for _, n := range nonces[:1100] {
		if err := s.PutContinuation(t.Context(), sampleContinuation(n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.TakeContinuation(t.Context(), "n-0007", "alpha", "digest-1"); err != nil {
		t.Fatal(err)
	}
	held, err := s.HeldContinuations(t.Context(), nonces)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1099 || held["n-0007"] || !held["n-1099"] || held["n-1100"] {
		t.Fatalf("%d held; want the 1100 put less the one taken", len(held))
	}
}
