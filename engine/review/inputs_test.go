package review

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"
)

// keptEntry is a decision of server with its kept input; doc nil keeps a
// decision made before the policy ran.
func keptEntry(id, server, outcome string, doc json.RawMessage) Entry {
	return Entry{
		Decision: Decision{ID: id, Server: server, Stage: StageRequest, Outcome: outcome},
		Input: &KeptInput{DecisionID: id, Server: server, Kind: "sampling", Stage: StageRequest,
			Revision: "rev1", Outcome: outcome, Reasons: []string{"code-" + id}, Input: doc},
	}
}

// replayed reads every decision Replay selects with f, by id.
func replayed(t *testing.T, s *Store, f ReplayFilter) (map[string]Replayed, []string) {
	t.Helper()
	got, order := map[string]Replayed{}, []string{}
	if err := s.Replay(t.Context(), f, func(r Replayed) error {
		got[r.Decision.ID], order = r, append(order, r.Decision.ID)
		return nil
	}); err != nil {
		t.Fatalf("Replay: %v", err)
	}
	return got, order
}

// TestKeptInputsTravelWithTheirDecision: an input is kept in its
// decision's own write, whichever way the decision is written (alone,
// opening a review, charged on usage); Replay reads each decision with its
// input or without one, and the charge counts once, as without an input.
func TestKeptInputsTravelWithTheirDecision(t *testing.T) {
	s, ctx := openStore(t, stateDir(t)), t.Context()
	doc := json.RawMessage(`{"kind":"sampling","usage":{"hour":{"tokens":12}}}`)
	if _, err := s.Commit(ctx, keptEntry("dc-plain", "alpha", "pass", doc)); err != nil {
		t.Fatal(err)
	}
	held := keptEntry("dc-held", "alpha", "escalate", doc)
	it := sampleItem("alpha")
	held.Review, held.ReviewTimeout = &it, time.Hour
	if _, err := s.Commit(ctx, held); err != nil {
		t.Fatal(err)
	}
	r, err := s.UsageReader(ctx, usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ChargeFor(ctx, "alpha", "", func(map[string]Usage) (Entry, error) {
		e := keptEntry("dc-charged", "alpha", "pass", doc)
		e.Usage = Usage{Requests: 1, Tokens: 40}
		return e, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, keptEntry("dc-blocked", "alpha", "blocker", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, Entry{Decision: Decision{ID: "dc-unkept", Server: "beta", Stage: StageRequest, Outcome: "pass"}}); err != nil {
		t.Fatal(err)
	}

	got, order := replayed(t, s, ReplayFilter{})
	if len(order) != 5 {
		t.Fatalf("Replay read %v; want 5 decisions", order)
	}
	for _, id := range []string{"dc-plain", "dc-held", "dc-charged"} {
		in := got[id].Input
		if !got[id].Kept || string(in.Input) != string(doc) || in.Revision != "rev1" || in.Kind != "sampling" ||
			len(in.Reasons) != 1 || in.Reasons[0] != "code-"+id {
			t.Errorf("%s = %+v; want its input kept as written", id, got[id])
		}
	}
	if b := got["dc-blocked"]; !b.Kept || b.Input.Input != nil || b.Input.Outcome != "blocker" {
		t.Errorf("dc-blocked = %+v; want kept without a document", b)
	}
	if u := got["dc-unkept"]; u.Kept || u.Decision.Server != "beta" {
		t.Errorf("dc-unkept = %+v; want its decision without an input", u)
	}
	if only, _ := replayed(t, s, ReplayFilter{Server: "beta"}); len(only) != 1 {
		t.Errorf("Replay of beta read %d decisions, want 1", len(only))
	}
	u, err := s.UsageIn(ctx, "alpha", usageWindows, time.Now())
	if err != nil || u["hour"].Tokens != 40 || u["hour"].Requests != 1 {
		t.Errorf("usage = %+v, %v; want the one charge, once", u, err)
	}
}

// TestKeptInputIsWrittenOnlyWithItsDecision: a decision that cannot be
// stored (its id is taken) keeps no input either.
func TestKeptInputIsWrittenOnlyWithItsDecision(t *testing.T) {
	s, ctx := openStore(t, stateDir(t)), t.Context()
	if _, err := s.Commit(ctx, Entry{Decision: Decision{ID: "dc-1", Server: "alpha", Stage: StageRequest, Outcome: "pass"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, keptEntry("dc-1", "alpha", "pass", json.RawMessage(`{}`))); err == nil {
		t.Fatal("a second decision dc-1 was stored")
	}
	if got, _ := replayed(t, s, ReplayFilter{}); got["dc-1"].Kept {
		t.Errorf("dc-1 = %+v; want no input kept for the decision that failed", got["dc-1"])
	}
}

// TestPruneDeletesKeptInputs: Prune deletes the inputs older than
// KeepInputs, whatever the review retention, and every input when
// KeepInputs is 0; the decisions stay.
func TestPruneDeletesKeptInputs(t *testing.T) {
	dir := stateDir(t)
	synctest.Test(t, func(t *testing.T) {
		s, ctx := openStore(t, dir), t.Context()
		s.KeepInputs = 24 * time.Hour
		doc := json.RawMessage(`{"kind":"sampling"}`)
		if _, err := s.Commit(ctx, keptEntry("dc-old", "alpha", "pass", doc)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(48 * time.Hour)
		if _, err := s.Commit(ctx, keptEntry("dc-new", "alpha", "pass", doc)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prune(ctx, 0); err != nil {
			t.Fatal(err)
		}
		got, order := replayed(t, s, ReplayFilter{})
		if len(order) != 2 || got["dc-old"].Kept || !got["dc-new"].Kept {
			t.Errorf("after prune: %+v; want dc-old's input gone, dc-new's kept", got)
		}
		s.KeepInputs = 0
		if _, err := s.Prune(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if got, _ := replayed(t, s, ReplayFilter{}); got["dc-new"].Kept {
			t.Errorf("replay.keep 0: dc-new's input was kept")
		}
	})
}
