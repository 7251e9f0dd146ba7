package review

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestReplicasShareOneChain is three replicas on one store (three Stores
// on one dir: three processes sharing the SQLite file, or three serve
// replicas sharing the PostgreSQL database) writing at once: each commits
// escalations and plain decisions, and the next replica approves and
// delivers what another opened. Every write lands, the audit chain has one
// head and verifies, every item has exactly its three entries, and the
// usage sums are exact.
func TestReplicasShareOneChain(t *testing.T) {
	const replicas, perReplica = 3, 15
	dir := stateDir(t)
	stores := make([]*Store, replicas)
	for i := range stores {
		stores[i] = openStore(t, dir)
	}
	at := now()
	var wg sync.WaitGroup
	for r, s := range stores {
		next := stores[(r+1)%replicas]
		wg.Go(func() {
			for n := range perReplica {
				it, err := s.Commit(t.Context(), Entry{
					Decision:      Decision{ID: fmt.Sprintf("dc-%d-%d-r", r, n), Server: "a", Stage: StageRequest, Outcome: "escalate", CreatedAt: at},
					Usage:         Usage{Requests: 1, RequestedTokens: 10, Tokens: 10},
					Review:        new(sampleItem("a")),
					ReviewTimeout: time.Hour,
				})
				if err != nil {
					t.Errorf("replica %d: Commit: %v", r, err)
					return
				}
				if _, err := s.Commit(t.Context(), Entry{
					Decision: Decision{ID: fmt.Sprintf("dc-%d-%d-p", r, n), Server: "a", Stage: StageRequest, Outcome: "pass", CreatedAt: at},
					Usage:    Usage{Requests: 1, RequestedTokens: 5, Tokens: 5},
				}); err != nil {
					t.Errorf("replica %d: Commit: %v", r, err)
					return
				}
				if _, err := next.Approve(t.Context(), it.ID, "alice", ""); err != nil {
					t.Errorf("replica %d: Approve: %v", r, err)
					return
				}
				if _, err := s.Finish(t.Context(), it.ID, StateDelivered, ""); err != nil {
					t.Errorf("replica %d: Finish: %v", r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	head, n, err := stores[0].VerifyAudit(t.Context())
	if err != nil {
		t.Fatalf("VerifyAudit after concurrent writes: %v", err)
	}
	items := replicas * perReplica
	if want := 3 * items; n != want || head.Seq != int64(want) {
		t.Errorf("audit chain of %d entries, head at %d; want %d (opened, approved, delivered per item)", n, head.Seq, want)
	}
	all, err := stores[1].List(t.Context(), Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range all {
		entries, err := stores[2].Audit(t.Context(), AuditFilter{ItemID: it.ID})
		if err != nil || len(entries) != 3 || it.State != StateDelivered {
			t.Errorf("%s: %s with %d audit entries (%v); want delivered with 3", it.ID, it.State, len(entries), err)
		}
	}
	got, err := stores[2].UsageIn(t.Context(), "a", usageWindows, at)
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Requests: int64(2 * items), RequestedTokens: int64(15 * items), Tokens: int64(15 * items)}
	if got["minute"] != want || got["hour"] != want {
		t.Errorf("usage = %+v; want %+v in each window", got, want)
	}
}

// TestRacingDecisionsFromReplicas: for each item, every replica decides at
// once (approve or reject, different operators). Exactly one decision
// stands, the others get a DecidedError naming it, the item has exactly
// one decision in its history and audit trail, and the chain verifies.
func TestRacingDecisionsFromReplicas(t *testing.T) {
	const replicas, items = 4, 12
	dir := stateDir(t)
	stores := make([]*Store, replicas)
	for i := range stores {
		stores[i] = openStore(t, dir)
	}
	for n := range items {
		it := mustAdd(t, stores[n%replicas], sampleItem("a"), time.Hour)
		won := make(chan Item, replicas)
		var wg sync.WaitGroup
		for r, s := range stores {
			wg.Go(func() {
				var got Item
				var err error
				if r%2 == 0 {
					got, err = s.Approve(t.Context(), it.ID, fmt.Sprintf("op-%d", r), "")
				} else {
					got, err = s.Reject(t.Context(), it.ID, fmt.Sprintf("op-%d", r), "no")
				}
				var decided *DecidedError
				switch {
				case err == nil:
					won <- got
				case !errors.As(err, &decided):
					t.Errorf("replica %d: %v; want success or a DecidedError", r, err)
				}
			})
		}
		wg.Wait()
		close(won)
		var winners []Item
		for w := range won {
			winners = append(winners, w)
		}
		if len(winners) != 1 {
			t.Fatalf("%s: %d decisions stood; want exactly 1", it.ID, len(winners))
		}
		stored := mustGet(t, stores[0], it.ID)
		if stored.State != winners[0].State || stored.DecidedBy != winners[0].DecidedBy {
			t.Errorf("%s stored as %s by %s; the decision that stood was %s by %s",
				it.ID, stored.State, stored.DecidedBy, winners[0].State, winners[0].DecidedBy)
		}
		hist, err := stores[1].History(t.Context(), it.ID)
		if err != nil || len(hist) != 2 {
			t.Errorf("%s: %d history rows, %v; want opened and one decision", it.ID, len(hist), err)
		}
		entries, err := stores[2].Audit(t.Context(), AuditFilter{ItemID: it.ID})
		if err != nil || len(entries) != 2 {
			t.Errorf("%s: %d audit entries, %v; want opened and one decision", it.ID, len(entries), err)
		}
	}
	if _, n, err := stores[3].VerifyAudit(t.Context()); err != nil || n != 2*items {
		t.Errorf("VerifyAudit: %d entries, %v; want %d and intact", n, err, 2*items)
	}
}
