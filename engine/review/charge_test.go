package review

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// budgetDecide is a policy with a budget of limit tokens an hour: a
// request reserving cost passes while it fits; every third one that fits
// is held for review instead (it reserves all the same); one that does
// not fit is denied. It tells what it decided through outcome.
func budgetDecide(id, server string, n int, limit, cost int64, outcome *string) func(map[string]Usage) (Entry, error) {
	return func(u map[string]Usage) (Entry, error) {
		e := Entry{Decision: Decision{ID: id, Server: server, Stage: StageRequest, Outcome: "blocker"}, Usage: Usage{Requests: 1}}
		if u["hour"].Tokens+cost <= limit {
			e.Decision.Outcome, e.Usage.RequestedTokens, e.Usage.Tokens = "pass", cost, cost
			if n%3 == 0 {
				e.Decision.Outcome, e.Review, e.ReviewTimeout = "escalate", new(sampleItem(server)), time.Hour
			}
		}
		*outcome = e.Decision.Outcome
		return e, nil
	}
}

// TestChargeExactAcrossReplicas is many goroutines in three Stores on one
// store (three processes on one SQLite file, three replicas on one
// PostgreSQL database) charging one server's budget at once, with plain
// charges (a validation blocker's one request) and another server's
// charges among them: exactly as many fit as the budget holds, the stored
// usage is exactly the sum of the charges committed, every decision is
// stored as decided, and the audit chain has one head.
func TestChargeExactAcrossReplicas(t *testing.T) {
	const replicas, perReplica, fit, cost = 3, 16, 7, 1000
	dir := stateDir(t)
	readers := make([]*UsageReader, replicas)
	stores := make([]*Store, replicas)
	for i := range readers {
		stores[i] = openStore(t, dir)
		r, err := stores[i].UsageReader(t.Context(), usageWindows)
		if err != nil {
			t.Fatal(err)
		}
		readers[i] = r
	}
	var passed, escalated, denied, plain atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for ri, r := range readers {
		for n := range perReplica {
			wg.Go(func() {
				<-start
				id := fmt.Sprintf("dc-%d-%d", ri, n)
				var outcome string
				it, err := r.Charge(t.Context(), "a", budgetDecide(id, "a", n, fit*cost, cost, &outcome))
				if err != nil {
					t.Errorf("Charge(%s): %v", id, err)
					return
				}
				if d, err := stores[ri].Decision(t.Context(), id); err != nil || d.Outcome != outcome || d.ReviewID != it.ID {
					t.Errorf("%s stored as %+v (%v), decided %s with review %q", id, d, err, outcome, it.ID)
				}
				map[string]*atomic.Int64{"pass": &passed, "escalate": &escalated, "blocker": &denied}[outcome].Add(1)
				if n%4 == 0 {
					if _, err := stores[ri].Commit(t.Context(), Entry{
						Decision: Decision{ID: id + "-screened", Server: "a", Stage: StageRequest, Outcome: "blocker"},
						Usage:    Usage{Requests: 1},
					}); err != nil {
						t.Errorf("Commit(%s-screened): %v", id, err)
					}
					plain.Add(1)
				}
				var other string
				if _, err := r.Charge(t.Context(), "b", budgetDecide(id+"-b", "b", 1, 1<<40, 1, &other)); err != nil {
					t.Errorf("Charge(%s-b): %v", id, err)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	total := int64(replicas * perReplica)
	if got := passed.Load() + escalated.Load(); got != fit || denied.Load() != total-fit {
		t.Errorf("%d passed and %d held of %d (%d denied), want exactly %d to fit", passed.Load(), escalated.Load(), total, denied.Load(), fit)
	}
	s := stores[0]
	got, err := s.UsageIn(t.Context(), "a", usageWindows, now())
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Requests: total + plain.Load(), RequestedTokens: fit * cost, Tokens: fit * cost}
	if got["hour"] != want || got["minute"] != want {
		t.Errorf("usage of a %+v, want %+v in each window", got, want)
	}
	if b, err := s.UsageIn(t.Context(), "b", usageWindows, now()); err != nil || b["hour"] != (Usage{Requests: total, RequestedTokens: total, Tokens: total}) {
		t.Errorf("usage of b %+v (%v), want %d requests of one token", b["hour"], err, total)
	}
	if head, n, err := s.VerifyAudit(t.Context()); err != nil || int64(n) != escalated.Load() || head.Seq != int64(n) {
		t.Errorf("audit chain: %d entries, head %d, %v; want one opened entry per review (%d)", n, head.Seq, err, escalated.Load())
	}
}

// TestChargeHoldsTheServersTurn: while one Store decides a charge, another
// Store (another process or replica) charges the same server. Either the
// other waits for the turn (PostgreSQL: the server's advisory lock) and
// lands after, or it lands first and the decision is made again on the
// usage it left (SQLite: the write reads the usage again). Either way the
// committed decision saw every charge committed before it.
func TestChargeHoldsTheServersTurn(t *testing.T) {
	dir := stateDir(t)
	s, other := openStore(t, dir), openStore(t, dir)
	r, err := s.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var saw []int64
	_, err = r.Charge(t.Context(), "a", func(u map[string]Usage) (Entry, error) {
		saw = append(saw, u["hour"].Tokens)
		if len(saw) == 1 {
			go func() {
				_, err := other.Commit(context.Background(), Entry{
					Decision: Decision{ID: "dc-other", Server: "a", Stage: StageRequest, Outcome: "pass"},
					Usage:    Usage{Requests: 1, RequestedTokens: 500, Tokens: 500},
				})
				done <- err
			}()
			if onPostgres() {
				waitForAdvisoryWaiter(t, s)
			} else if err := <-done; err != nil {
				t.Errorf("other's Commit: %v", err)
			}
		}
		return Entry{Decision: Decision{ID: "dc-mine", Server: "a", Stage: StageRequest, Outcome: "pass"},
			Usage: Usage{Requests: 1, RequestedTokens: 100, Tokens: 100}}, nil
	})
	if err != nil {
		t.Fatalf("Charge: %v", err)
	}
	if onPostgres() {
		if err := <-done; err != nil {
			t.Fatalf("other's Commit: %v", err)
		}
		if len(saw) != 1 || saw[0] != 0 {
			t.Errorf("decide saw %v, want [0]: the other charge waited for the turn", saw)
		}
	} else if len(saw) != 2 || saw[0] != 0 || saw[1] != 500 {
		t.Errorf("decide saw %v, want [0 500]: decided again on the other's charge", saw)
	}
	if u, err := s.UsageIn(t.Context(), "a", usageWindows, now()); err != nil || u["hour"].Tokens != 600 {
		t.Errorf("usage %+v (%v), want 600 tokens", u["hour"], err)
	}
}

// waitForAdvisoryWaiter polls until some session waits for an advisory
// lock: the other replica, queued behind the server's turn.
func waitForAdvisoryWaiter(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		err := s.db.QueryRow("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&n)
		if err != nil {
			t.Errorf("pg_locks: %v", err)
			return
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Error("no session waited for the server's advisory lock")
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestChargeWritesNothingOnRefusal: decide's error, an entry for another
// server, and a context that ends while waiting for the turn all leave the
// store as it was.
func TestChargeWritesNothingOnRefusal(t *testing.T) {
	s := openStore(t, stateDir(t))
	r, err := s.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("no")
	if _, err := r.Charge(t.Context(), "a", func(map[string]Usage) (Entry, error) { return Entry{}, refused }); !errors.Is(err, refused) {
		t.Errorf("decide's error: Charge returned %v, want it", err)
	}
	if _, err := r.Charge(t.Context(), "a", func(map[string]Usage) (Entry, error) {
		return Entry{Decision: Decision{ID: "dc-b", Server: "b", Stage: StageRequest, Outcome: "pass"}, Usage: Usage{Requests: 1}}, nil
	}); err == nil {
		t.Error("an entry for b charged in a's turn was committed")
	}
	held, release, holderDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(holderDone)
		r.Charge(context.Background(), "a", func(map[string]Usage) (Entry, error) {
			close(held)
			<-release
			return Entry{}, refused
		})
	}()
	<-held
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Charge(ctx, "a", func(map[string]Usage) (Entry, error) {
		t.Error("decide ran after its context ended")
		return Entry{}, refused
	}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while waiting: Charge returned %v, want context.Canceled", err)
	}
	close(release)
	<-holderDone
	for _, server := range []string{"a", "b"} {
		if u, err := s.UsageIn(t.Context(), server, usageWindows, now()); err != nil || u["hour"] != (Usage{}) {
			t.Errorf("usage of %s %+v (%v), want none", server, u["hour"], err)
		}
	}
}

// TestInsertUnchangedChecksTheSums: SQLite's conditional insert stores a
// decision when the usage sums are the ones it was decided on, and nothing
// when they moved, so an uncontended charge costs one statement and a
// contended one is caught.
func TestInsertUnchangedChecksTheSums(t *testing.T) {
	sqliteOnly(t, "PostgreSQL charges under the server's advisory lock instead")
	s := openStore(t, stateDir(t))
	r, err := s.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	at := now()
	commitAt(t, s, "dc-0", "a", at, Usage{Requests: 1, Tokens: 10})
	sums, err := r.scan(r.stmt.QueryRowContext(t.Context(), r.args("a", at)...), "a")
	if err != nil {
		t.Fatal(err)
	}
	entry := func(id string) Entry {
		return Entry{Decision: Decision{ID: id, Server: "a", Stage: StageRequest, Outcome: "pass", Reasons: []Reason{}, CreatedAt: at},
			Usage: Usage{Requests: 1, Tokens: 5}}
	}
	if stored, err := r.insertUnchanged(t.Context(), entry("dc-1"), "a", at, sums); err != nil || !stored {
		t.Fatalf("on the sums just read: stored %v, %v; want stored", stored, err)
	}
	if stored, err := r.insertUnchanged(t.Context(), entry("dc-2"), "a", at, sums); err != nil || stored {
		t.Fatalf("on sums that moved: stored %v, %v; want nothing stored", stored, err)
	}
	if _, err := s.Decision(t.Context(), "dc-2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("dc-2: %v, want ErrNotFound", err)
	}
	if u, err := s.UsageIn(t.Context(), "a", usageWindows, at); err != nil || u["hour"] != (Usage{Requests: 2, Tokens: 15}) {
		t.Errorf("usage %+v (%v), want the first two decisions'", u["hour"], err)
	}
}

// TestChargeStopsWaitingWhenCancelled: a replica waiting for a server's
// turn that another replica holds stops waiting when its request is
// cancelled, writes nothing, and leaves the turn to the holder.
func TestChargeStopsWaitingWhenCancelled(t *testing.T) {
	if !onPostgres() {
		t.Skip("PostgreSQL only: on SQLite a charge never waits for another process's turn, it checks the sums when it writes")
	}
	dir := stateDir(t)
	holder, waiter := openStore(t, dir), openStore(t, dir)
	hr, err := holder.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	wr, err := waiter.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	held, release, held2 := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := hr.Charge(context.Background(), "a", func(map[string]Usage) (Entry, error) {
			close(held)
			<-release
			return Entry{Decision: Decision{ID: "dc-holder", Server: "a", Stage: StageRequest, Outcome: "pass"},
				Usage: Usage{Requests: 1, Tokens: 7}}, nil
		})
		held2 <- err
	}()
	<-held
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan error, 1)
	go func() {
		_, err := wr.Charge(ctx, "a", func(map[string]Usage) (Entry, error) {
			t.Error("the waiter decided while the holder had the turn")
			return Entry{}, errors.New("no")
		})
		waited <- err
	}()
	waitForAdvisoryWaiter(t, holder)
	cancel()
	select {
	case err := <-waited:
		if err == nil {
			t.Error("the cancelled waiter's Charge succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Error("the cancelled waiter kept waiting for the turn")
	}
	close(release)
	if err := <-held2; err != nil {
		t.Fatalf("holder: %v", err)
	}
	if u, err := waiter.UsageIn(t.Context(), "a", usageWindows, now()); err != nil || u["hour"] != (Usage{Requests: 1, Tokens: 7}) {
		t.Errorf("usage %+v (%v), want the holder's charge alone", u["hour"], err)
	}
}
