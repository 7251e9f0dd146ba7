package review

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestApproveThenDeliver(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := mustAdd(t, s, sampleItem("everything"), time.Hour)
	approved, err := s.Approve(t.Context(), it.ID, "alice", "looks fine")
	if err != nil {
		t.Fatal(err)
	}
	if approved.State != StateApproved || approved.DecidedBy != "alice" || approved.Note != "looks fine" || approved.DecidedAt.IsZero() {
		t.Errorf("Approve returned %s by %q note %q at %v", approved.State, approved.DecidedBy, approved.Note, approved.DecidedAt)
	}
	if diff := cmp.Diff(approved, mustGet(t, s, it.ID)); diff != "" {
		t.Errorf("Get after Approve (-approve +get):\n%s", diff)
	}
	done, err := s.Finish(t.Context(), it.ID, StateDelivered, "forwarded")
	if err != nil {
		t.Fatal(err)
	}
	if done.State != StateDelivered || done.FinishNote != "forwarded" || done.Note != "looks fine" || done.DecidedBy != "alice" {
		t.Errorf("Finish returned %+v; want delivered, keeping the operator's note", done)
	}
	wantHistory(t, s, it.ID, "", StatePending, StateApproved, StateDelivered)

	_, err = s.Finish(t.Context(), it.ID, StateFailed, "")
	wantDecided(t, err, StateDelivered, "was approved by alice at", "and then delivered at")
	_, err = s.Reject(t.Context(), it.ID, "bob", "")
	wantDecided(t, err, StateDelivered, "was approved by alice")
}

func TestRejectThenNothing(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := mustAdd(t, s, sampleItem("everything"), time.Hour)
	rejected, err := s.Reject(t.Context(), it.ID, "bob", "exfiltration")
	if err != nil {
		t.Fatal(err)
	}
	if rejected.State != StateRejected || rejected.DecidedBy != "bob" || rejected.Note != "exfiltration" {
		t.Errorf("Reject returned %+v", rejected)
	}
	_, err = s.Approve(t.Context(), it.ID, "alice", "")
	wantDecided(t, err, StateRejected, it.ID+" was already rejected by bob at "+rejected.DecidedAt.Format(time.RFC3339))
	_, err = s.Finish(t.Context(), it.ID, StateDelivered, "")
	wantDecided(t, err, StateRejected, "already rejected by bob")
	wantHistory(t, s, it.ID, "", StatePending, StateRejected)
}

func TestFinishRules(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := mustAdd(t, s, sampleItem("everything"), time.Hour)
	if _, err := s.Finish(t.Context(), it.ID, StateDelivered, ""); !errors.Is(err, ErrNotApproved) {
		t.Errorf("Finish(pending): %v, want ErrNotApproved", err)
	}
	if _, err := s.Approve(t.Context(), it.ID, "alice", ""); err != nil {
		t.Fatal(err)
	}
	for _, st := range []State{StatePending, StateApproved, StateRejected, "done"} {
		if _, err := s.Finish(t.Context(), it.ID, st, ""); err == nil {
			t.Errorf("Finish(%q) succeeded; only delivered and failed may finish", st)
		}
	}
	failed, err := s.Finish(t.Context(), it.ID, StateFailed, "re-check refused it")
	if err != nil || failed.State != StateFailed {
		t.Fatalf("Finish(failed): %v, %v", failed.State, err)
	}
}

func TestDecideNeedsAnOperator(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := mustAdd(t, s, sampleItem("everything"), time.Hour)
	if _, err := s.Approve(t.Context(), it.ID, "", ""); err == nil {
		t.Error("Approve with no operator name succeeded")
	}
	if got := mustGet(t, s, it.ID); got.State != StatePending {
		t.Errorf("after a refused approval the item is %s", got.State)
	}
}

// TestConcurrentApproveOneWinner is two processes' worth of operators
// approving one item at once: exactly one succeeds and every other call
// gets a DecidedError naming that one.
func TestConcurrentApproveOneWinner(t *testing.T) {
	dir := stateDir(t)
	stores := []*Store{openStore(t, dir), openStore(t, dir)}
	for round := range 3 {
		it := mustAdd(t, stores[round%2], sampleItem("everything"), time.Hour)
		var mu sync.Mutex
		var winners []string
		var losers []*DecidedError
		var wg sync.WaitGroup
		for si, s := range stores {
			for g := range 10 {
				by := fmt.Sprintf("op-%d-%d", si, g)
				wg.Go(func() {
					_, err := s.Approve(t.Context(), it.ID, by, "")
					var de *DecidedError
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						winners = append(winners, by)
					case errors.As(err, &de):
						losers = append(losers, de)
					default:
						t.Errorf("Approve by %s: %v", by, err)
					}
				})
			}
		}
		wg.Wait()
		if len(winners) != 1 || len(losers) != 19 {
			t.Fatalf("round %d: %d winners %v, %d DecidedErrors; want 1 and 19", round, len(winners), winners, len(losers))
		}
		for _, de := range losers {
			if de.Item.DecidedBy != winners[0] || !strings.Contains(de.Error(), "already approved by "+winners[0]+" at ") {
				t.Errorf("loser was told %q, want the winner %s", de, winners[0])
			}
		}
		wantHistory(t, stores[0], it.ID, "", StatePending, StateApproved)
		if entries, _ := stores[1].Audit(t.Context(), AuditFilter{ItemID: it.ID}); len(entries) != 2 || entries[1].Operator != winners[0] {
			t.Errorf("round %d: audit = %+v; want opened and one approval by %s", round, entries, winners[0])
		}
	}
}

func wantDecided(t *testing.T, err error, st State, phrases ...string) {
	t.Helper()
	var de *DecidedError
	if !errors.As(err, &de) {
		t.Fatalf("error %v, want a *DecidedError", err)
	}
	if de.Item.State != st {
		t.Errorf("DecidedError item is %s, want %s", de.Item.State, st)
	}
	for _, p := range phrases {
		if !strings.Contains(de.Error(), p) {
			t.Errorf("DecidedError %q does not say %q", de, p)
		}
	}
}

// wantHistory checks the item's history walks exactly these states.
func wantHistory(t *testing.T, s *Store, id string, states ...State) {
	t.Helper()
	h, err := s.History(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var got []State
	for i, tr := range h {
		if i == 0 {
			got = append(got, tr.From)
		}
		got = append(got, tr.To)
	}
	if diff := cmp.Diff(states, got); diff != "" {
		t.Errorf("history of %s (-want +got):\n%s", id, diff)
	}
}
