package engine

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// keptOf reads every decision the store holds, by id.
func keptOf(t *testing.T, store *review.Store) map[string]review.Replayed {
	t.Helper()
	got := map[string]review.Replayed{}
	if err := store.Replay(t.Context(), review.ReplayFilter{}, func(r review.Replayed) error {
		got[r.Decision.ID] = r
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestReplayRedecidesWhatThePolicySaw: with KeepInputs, every decision the
// policy made keeps its input, written once the keeper flushes, and the same policy decides it again alike
// (the approval and the operator-answer hold included); a request
// validation blocked keeps no document; replaying changes neither usage
// nor the audit chain.
func TestReplayRedecidesWhatThePolicySaw(t *testing.T) {
	e, store := newTestEngine(t, Config{KeepInputs: true})
	ctx := t.Context()
	long := sampling("everything", textParams("Hello", 2000))
	held := e.Decide(ctx, long)
	answer := sampling("everything", textParams("Write it for me", 100))
	answer.AwaitAnswer = true
	verdicts := []Verdict{
		e.Decide(ctx, sampling("everything", textParams("Hello", 100))),
		held,
		e.Decide(ctx, sampling("everything", toolParams)),
		e.Reconsider(ctx, long, nil, Approval{DecisionID: held.DecisionID, By: "alice", At: time.Now()}),
		e.Check(ctx, sampling("everything", textParams("Hello", 100)), []byte(`{"role":"assistant","model":"m","content":{"type":"text","text":"hi"}}`)),
		e.Decide(ctx, answer),
	}
	invalid := e.Decide(ctx, sampling("everything", `{"messages":[],"maxTokens":1}`))
	usage, err := store.UsageIn(ctx, "everything", DefaultUsageWindows, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, audits, err := store.VerifyAudit(ctx)
	if err != nil {
		t.Fatal(err)
	}

	e.keeper.Flush()
	kept := keptOf(t, store)
	for _, v := range verdicts {
		k := kept[v.DecisionID]
		if !k.Kept || k.Input.Input == nil || k.Input.Outcome != v.Outcome.String() || k.Input.Revision != e.Revision() {
			t.Errorf("%s (%s): kept %+v", v.DecisionID, v.Outcome, k)
			continue
		}
		again, err := Redecide(ctx, e.policy.Load(), k.Input)
		if err != nil || again.Outcome != v.Outcome || !slices.Equal(again.ReasonCodes(), v.ReasonCodes()) {
			t.Errorf("%s: replayed %s %v (%v), decided %s %v", v.DecisionID, again.Outcome, again.ReasonCodes(), err, v.Outcome, v.ReasonCodes())
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(kept[verdicts[3].DecisionID].Input.Input, &doc); err != nil || doc["approval"] == nil || doc["usage"] == nil {
		t.Errorf("the reconsidered input = %v, %v; want its approval and usage", doc, err)
	}
	k := kept[invalid.DecisionID]
	if _, err := Redecide(ctx, e.policy.Load(), k.Input); !k.Kept || k.Input.Input != nil || !errors.Is(err, ErrNotKept) {
		t.Errorf("the invalid request: kept %+v, replay %v; want kept without a document", k, err)
	}

	after, err := store.UsageIn(ctx, "everything", DefaultUsageWindows, time.Now())
	if err != nil || after["hour"] != usage["hour"] {
		t.Errorf("usage after replay = %+v, %v; before %+v", after, err, usage)
	}
	if _, n, err := store.VerifyAudit(ctx); err != nil || n != audits {
		t.Errorf("audit after replay: %d entries, %v; before %d", n, err, audits)
	}
}

// TestNothingKeptByDefault: without KeepInputs no input is stored.
func TestNothingKeptByDefault(t *testing.T) {
	e, store := newTestEngine(t, Config{})
	v := e.Decide(t.Context(), sampling("everything", textParams("Hello", 100)))
	if k := keptOf(t, store)[v.DecisionID]; k.Kept || k.Decision.ID != v.DecisionID {
		t.Errorf("kept %+v; want the decision alone", k)
	}
}

// TestAFloodKeepsAtMostTheBound is the attacker's test of the kept
// inputs' bound: an upstream whose every request carries 16 KB of text
// makes the store keep at most KeepInputsBytes of its traffic (and a
// sixteenth more between two trims), the newest of it; its decisions all
// stand.
func TestAFloodKeepsAtMostTheBound(t *testing.T) {
	e, store := newTestEngine(t, Config{KeepInputs: true})
	const bound = 256 << 10
	store.KeepInputsBytes = bound
	text := strings.Repeat("The reviewer reads the change. ", 16000/31)
	var last string
	for range 200 {
		last = e.Decide(t.Context(), sampling("everything", textParams(text, 100))).DecisionID
	}
	e.keeper.Flush()
	var size int64
	decided, kept := 0, 0
	newest := false
	for id, r := range keptOf(t, store) {
		decided++
		if r.Kept {
			kept++
			size += int64(len(r.Input.Input)) + 256
			newest = newest || id == last
		}
	}
	t.Logf("%d decisions, %d inputs kept, taking %d bytes of a bound of %d", decided, kept, size, bound)
	if decided != 200 || kept == 0 || !newest {
		t.Errorf("%d decisions, %d kept, the newest kept: %v; want all 200 decided and the newest kept", decided, kept, newest)
	}
	if size > bound+bound/16 {
		t.Errorf("the kept inputs take %d bytes, over the bound of %d and a sixteenth", size, bound)
	}
}
