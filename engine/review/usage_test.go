package review

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var usageWindows = map[string]time.Duration{"minute": time.Minute, "hour": time.Hour}

// commitAt commits a decision of server at the given time with usage u.
func commitAt(t *testing.T, s *Store, id, server string, at time.Time, u Usage) {
	t.Helper()
	_, err := s.Commit(t.Context(), Entry{
		Decision: Decision{ID: id, Server: server, Stage: StageRequest, Outcome: "pass", CreatedAt: at},
		Usage:    u,
	})
	if err != nil {
		t.Fatalf("Commit(%s): %v", id, err)
	}
}

func TestUsageInSumsEachWindow(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := now()
	commitAt(t, s, "dc-1", "a", at.Add(-2*time.Hour), Usage{Requests: 1, RequestedTokens: 1000, Tokens: 1000})
	commitAt(t, s, "dc-2", "a", at.Add(-30*time.Minute), Usage{Requests: 1, RequestedTokens: 100, Tokens: 100})
	commitAt(t, s, "dc-3", "a", at.Add(-10*time.Second), Usage{Requests: 1, RequestedTokens: 50, Tokens: 50})
	commitAt(t, s, "dc-4", "a", at.Add(-5*time.Second), Usage{ReturnedTokens: 20, Tokens: -30})
	commitAt(t, s, "dc-5", "b", at, Usage{Requests: 1, RequestedTokens: 7, Tokens: 7})

	got, err := s.UsageIn(t.Context(), "a", usageWindows, at)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Usage{
		"minute": {Requests: 1, RequestedTokens: 50, ReturnedTokens: 20, Tokens: 20},
		"hour":   {Requests: 2, RequestedTokens: 150, ReturnedTokens: 20, Tokens: 120},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage of a (-want +got):\n%s", diff)
	}
}

func TestUsageInEmptyServerIsZero(t *testing.T) {
	s := openStore(t, stateDir(t))
	got, err := s.UsageIn(t.Context(), "nobody", usageWindows, now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]Usage{"minute": {}, "hour": {}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A completion whose request fell out of the window would leave a negative
// charge behind; a window never reports less than nothing.
func TestUsageInNeverNegative(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := now()
	commitAt(t, s, "dc-1", "a", at.Add(-2*time.Minute), Usage{Requests: 1, RequestedTokens: 500, Tokens: 500})
	commitAt(t, s, "dc-2", "a", at, Usage{ReturnedTokens: 10, Tokens: -490})
	got, err := s.UsageIn(t.Context(), "a", usageWindows, at)
	if err != nil {
		t.Fatal(err)
	}
	if got["minute"].Tokens != 0 || got["hour"].Tokens != 10 {
		t.Errorf("tokens minute %d hour %d, want 0 and 10", got["minute"].Tokens, got["hour"].Tokens)
	}
}

func TestCommitOpensReviewWithDecision(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := sampleItem("everything")
	opened, err := s.Commit(t.Context(), Entry{
		Decision:      Decision{ID: "dc-9", Server: "everything", Stage: StageRequest, Outcome: "escalate", Reasons: it.Reasons},
		Usage:         Usage{Requests: 1, RequestedTokens: 64, Tokens: 64},
		Review:        &it,
		ReviewTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ValidID(opened.ID) || opened.State != StatePending || opened.DecisionID != "dc-9" {
		t.Fatalf("opened %+v", opened)
	}
	d, err := s.Decision(t.Context(), "dc-9")
	if err != nil || d.ReviewID != opened.ID {
		t.Fatalf("decision %+v, %v; want review %s", d, err, opened.ID)
	}
	if got := mustGet(t, s, opened.ID); got.State != StatePending {
		t.Errorf("stored item state %s", got.State)
	}
	hist, err := s.History(t.Context(), opened.ID)
	if err != nil || len(hist) != 1 || hist[0].To != StatePending {
		t.Errorf("history %+v, %v; want one opening row", hist, err)
	}
}

// One transaction: when any part fails, nothing of the entry is stored, so
// no review waits without its decision and no usage counts twice.
func TestCommitIsAllOrNothing(t *testing.T) {
	s := openStore(t, stateDir(t))
	commitAt(t, s, "dc-1", "a", now(), Usage{Requests: 1, Tokens: 100})
	it := sampleItem("a")
	_, err := s.Commit(t.Context(), Entry{
		Decision:      Decision{ID: "dc-1", Server: "a", Stage: StageRequest, Outcome: "escalate"},
		Usage:         Usage{Requests: 1, Tokens: 100},
		Review:        &it,
		ReviewTimeout: time.Minute,
	})
	if err == nil {
		t.Fatal("a second decision with the same id was stored")
	}
	items, err := s.List(t.Context(), Filter{All: true})
	if err != nil || len(items) != 0 {
		t.Errorf("items %v, %v; want none", items, err)
	}
	got, err := s.UsageIn(t.Context(), "a", usageWindows, now())
	if err != nil || got["hour"].Requests != 1 || got["hour"].Tokens != 100 {
		t.Errorf("usage %+v, %v; want the first entry only", got, err)
	}
}

func TestCommitRefusesBadEntries(t *testing.T) {
	s := openStore(t, stateDir(t))
	bad := sampleItem("a")
	bad.Request = nil
	tests := map[string]Entry{
		"no id":          {Decision: Decision{Server: "a", Outcome: "pass"}},
		"no outcome":     {Decision: Decision{ID: "dc-1", Server: "a"}},
		"no timeout":     {Decision: Decision{ID: "dc-2", Server: "a", Outcome: "escalate"}, Review: new(sampleItem("a"))},
		"review invalid": {Decision: Decision{ID: "dc-3", Server: "a", Outcome: "escalate"}, Review: &bad, ReviewTimeout: time.Minute},
	}
	for name, e := range tests {
		if _, err := s.Commit(t.Context(), e); err == nil {
			t.Errorf("%s: Commit accepted %+v", name, e)
		}
	}
}

// A UsageReader reads what UsageIn reads, with its statement prepared once,
// from many goroutines at a time.
func TestUsageReaderMatchesUsageIn(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := now()
	commitAt(t, s, "dc-1", "a", at.Add(-30*time.Minute), Usage{Requests: 1, RequestedTokens: 100, Tokens: 100})
	commitAt(t, s, "dc-2", "a", at.Add(-10*time.Second), Usage{ReturnedTokens: 20, Tokens: -80})
	r, err := s.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.UsageIn(t.Context(), "a", usageWindows, at)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			got, err := r.Read(t.Context(), "a", at)
			if err == nil && !cmp.Equal(want, got) {
				err = fmt.Errorf("reader %v, UsageIn %v", got, want)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestUsageReaderWithoutWindows(t *testing.T) {
	s := openStore(t, stateDir(t))
	r, err := s.UsageReader(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Read(t.Context(), "a", now()); err != nil || len(got) != 0 {
		t.Errorf("Read = %v, %v; want no windows", got, err)
	}
}

// An escalated completion committed under WithParent is linked to the
// request's item, as Add links it.
func TestCommitLinksResultStageItem(t *testing.T) {
	s := openStore(t, stateDir(t))
	parent := mustAdd(t, s, sampleItem("a"), time.Minute)
	it := sampleItem("a")
	it.Stage, it.Result = StageResult, []byte(`{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}`)
	opened, err := s.Commit(WithParent(t.Context(), parent.ID), Entry{
		Decision:      Decision{ID: "dc-2", Server: "a", Stage: StageResult, Outcome: "escalate"},
		Review:        &it,
		ReviewTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if opened.Parent != parent.ID || mustGet(t, s, opened.ID).Parent != parent.ID {
		t.Errorf("parent %q (stored %q), want %s", opened.Parent, mustGet(t, s, opened.ID).Parent, parent.ID)
	}
}
