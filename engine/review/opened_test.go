package review

import (
	"slices"
	"testing"
	"time"
)

// TestOpenedHearsEveryWayIn: Store.Opened hears of every item the Store
// opens, whichever way it came in (Add, Commit, Charge), once, with its
// ids, server, stage and reason codes; a decision that opens no item is
// not heard of, and an item another Store opens is heard of there only.
func TestOpenedHearsEveryWayIn(t *testing.T) {
	dir := stateDir(t)
	s, other := openStore(t, dir), openStore(t, dir)
	var heard []Opened
	s.Opened = func(o Opened) { heard = append(heard, o) }
	var otherHeard []Opened
	other.Opened = func(o Opened) { otherHeard = append(otherHeard, o) }
	r, err := s.UsageReader(t.Context(), usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	escalation := func(id string) Entry {
		it := sampleItem("a")
		return Entry{Decision: Decision{ID: id, Server: "a", Stage: StageRequest, Outcome: "escalate"},
			Usage: Usage{Requests: 1}, Review: &it, ReviewTimeout: time.Minute}
	}
	var opened []Item
	opened = append(opened, mustAdd(t, s, sampleItem("a"), time.Minute))
	it, err := s.Commit(t.Context(), escalation("dc-commit"))
	if err != nil {
		t.Fatal(err)
	}
	opened = append(opened, it)
	if it, err = r.Charge(t.Context(), "a", func(map[string]Usage) (Entry, error) { return escalation("dc-charge"), nil }); err != nil {
		t.Fatal(err)
	}
	opened = append(opened, it)
	if _, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-pass", Server: "a", Stage: StageRequest, Outcome: "pass"}}); err != nil {
		t.Fatal(err)
	}
	if it, err := other.Add(t.Context(), sampleItem("a"), time.Minute); err != nil || len(otherHeard) != 1 || otherHeard[0].ReviewID != it.ID {
		t.Fatalf("the other Store opened %s (%v) and heard of %+v", it.ID, err, otherHeard)
	}
	if len(heard) != len(opened) {
		t.Fatalf("heard of %d reviews, want %d: %+v", len(heard), len(opened), heard)
	}
	for i, it := range opened {
		h := heard[i]
		if h.ReviewID != it.ID || h.DecisionID != it.DecisionID || h.Server != "a" || h.Stage != StageRequest || !slices.Equal(h.Codes, []string{"needs_review"}) {
			t.Errorf("heard %+v of review %s (decision %s)", h, it.ID, it.DecisionID)
		}
	}
}
