package review

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
)

// keptEntry is a decision of server and its kept input; doc nil keeps a
// decision made before the policy ran.
func keptEntry(id, server, outcome string, doc json.RawMessage) (Entry, KeptInput) {
	e := Entry{Decision: Decision{ID: id, Server: server, Stage: StageRequest, Outcome: outcome, CreatedAt: time.Now()}}
	return e, KeptInput{DecisionID: id, Server: server, Kind: "sampling", Stage: StageRequest,
		Revision: "rev1", Outcome: outcome, Reasons: []string{"code-" + id}, Input: doc, CreatedAt: e.Decision.CreatedAt}
}

// commitKept commits e and keeps its input, as the engine does: the
// decision first, the input after it.
func commitKept(t *testing.T, s *Store, e Entry, in KeptInput) {
	t.Helper()
	if _, err := s.Commit(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteInputs(t.Context(), []KeptInput{in}); err != nil {
		t.Fatal(err)
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

// TestKeptInputsTravelWithTheirDecision: inputs written in one batch
// after their decisions, whichever way each decision was written (alone,
// opening a review, charged on usage), are read by Replay with their
// decision; a decision without one is read without; the charge counts
// once, as without an input.
func TestKeptInputsTravelWithTheirDecision(t *testing.T) {
	s, ctx := openStore(t, stateDir(t)), t.Context()
	doc := json.RawMessage(`{"kind":"sampling","usage":{"hour":{"tokens":12}}}`)
	var ins []KeptInput
	plain, in := keptEntry("dc-plain", "alpha", "pass", doc)
	ins = append(ins, in)
	if _, err := s.Commit(ctx, plain); err != nil {
		t.Fatal(err)
	}
	held, in := keptEntry("dc-held", "alpha", "escalate", doc)
	ins = append(ins, in)
	it := sampleItem("alpha")
	held.Review, held.ReviewTimeout = &it, time.Hour
	if _, err := s.Commit(ctx, held); err != nil {
		t.Fatal(err)
	}
	r, err := s.UsageReader(ctx, usageWindows)
	if err != nil {
		t.Fatal(err)
	}
	charged, in := keptEntry("dc-charged", "alpha", "pass", doc)
	ins = append(ins, in)
	charged.Usage = Usage{Requests: 1, Tokens: 40}
	if _, err := r.ChargeFor(ctx, "alpha", "", func(map[string]Usage) (Entry, error) { return charged, nil }); err != nil {
		t.Fatal(err)
	}
	blocked, in := keptEntry("dc-blocked", "alpha", "blocker", nil)
	ins = append(ins, in)
	if _, err := s.Commit(ctx, blocked); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, Entry{Decision: Decision{ID: "dc-unkept", Server: "beta", Stage: StageRequest, Outcome: "pass"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteInputs(ctx, ins); err != nil {
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

// TestWriteInputsKeepsTheFirst: a decision's input written twice keeps
// the first, and the rest of the batch is written; a batch over
// KeepInputsBatch is refused whole; a batch of any size is written whole.
func TestWriteInputsKeepsTheFirst(t *testing.T) {
	s, ctx := openStore(t, stateDir(t)), t.Context()
	e1, first := keptEntry("dc-1", "alpha", "pass", json.RawMessage(`{"n":1}`))
	commitKept(t, s, e1, first)
	e2, second := keptEntry("dc-2", "alpha", "pass", json.RawMessage(`{"n":2}`))
	if _, err := s.Commit(ctx, e2); err != nil {
		t.Fatal(err)
	}
	again := first
	again.Input = json.RawMessage(`{"n":"again"}`)
	if err := s.WriteInputs(ctx, []KeptInput{again, second}); err != nil {
		t.Fatal(err)
	}
	got, _ := replayed(t, s, ReplayFilter{})
	if string(got["dc-1"].Input.Input) != `{"n":1}` || string(got["dc-2"].Input.Input) != `{"n":2}` {
		t.Errorf("kept %s and %s; want the first of dc-1's and dc-2's", got["dc-1"].Input.Input, got["dc-2"].Input.Input)
	}
	if err := s.WriteInputs(ctx, make([]KeptInput, KeepInputsBatch+1)); err == nil {
		t.Error("a batch over KeepInputsBatch was written")
	}
	var seven []KeptInput // written as 4, 2 and 1 rows
	for i := range 7 {
		e, in := keptEntry(fmt.Sprintf("dc-b%d", i), "alpha", "pass", json.RawMessage(`{}`))
		if _, err := s.Commit(ctx, e); err != nil {
			t.Fatal(err)
		}
		seven = append(seven, in)
	}
	if err := s.WriteInputs(ctx, seven); err != nil {
		t.Fatal(err)
	}
	got, _ = replayed(t, s, ReplayFilter{})
	for _, in := range seven {
		if !got[in.DecisionID].Kept {
			t.Errorf("%s: not kept from a batch of 7", in.DecisionID)
		}
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
		old, in := keptEntry("dc-old", "alpha", "pass", doc)
		commitKept(t, s, old, in)
		time.Sleep(48 * time.Hour)
		recent, in := keptEntry("dc-new", "alpha", "pass", doc)
		commitKept(t, s, recent, in)
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

// keptSize is what the kept inputs take as KeepInputsBytes counts it,
// and the ids kept, oldest first.
func keptSize(t testing.TB, s *Store) (int64, []string) {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(), `SELECT decision_id, COALESCE(LENGTH(input), 0) FROM decision_inputs ORDER BY created_at, decision_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var total int64
	var ids []string
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		total, ids = total+n+keptRowOverhead, append(ids, id)
	}
	return total, ids
}

// keptBatch is n inputs of server with documents of size bytes, made
// one second apart from at on, their ids prefix-000 on.
func keptBatch(server, prefix string, n, size int, at time.Time) []KeptInput {
	doc := json.RawMessage(`{"text":"` + strings.Repeat("x", size-11) + `"}`)
	ins := make([]KeptInput, n)
	for i := range ins {
		ins[i] = KeptInput{DecisionID: fmt.Sprintf("%s-%03d", prefix, i), Server: server, Kind: "sampling", Stage: StageRequest,
			Revision: "rev1", Outcome: "pass", Input: doc, CreatedAt: at.Add(time.Duration(i) * time.Second)}
	}
	return ins
}

// TestKeptInputsBoundedByBytes: an upstream's traffic takes at most
// KeepInputsBytes of the store, whatever its age: WriteInputs trims once
// a trimShare of the bound was written, Prune trims to the bound. What is
// deleted is the oldest of the server whose inputs take the most, so a
// quiet server's older inputs outlive a flood's. A document-less row
// counts too. 0 bounds nothing.
func TestKeptInputsBoundedByBytes(t *testing.T) {
	s, ctx := openStore(t, stateDir(t)), t.Context()
	const size, max = 4096, 64 << 10 // 16 documents' worth, a trim due every 4 KiB written
	s.KeepInputs, s.KeepInputsBytes = time.Hour, max
	start := time.Now().Add(-20 * time.Minute)
	if err := s.WriteInputs(ctx, keptBatch("quiet", "q", 3, 1024, start)); err != nil {
		t.Fatal(err)
	}
	for b := range 8 {
		if err := s.WriteInputs(ctx, keptBatch("flood", fmt.Sprintf("b%d", b), 10, size, start.Add(time.Duration(b+1)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	total, ids := keptSize(t, s)
	if over := int64(max + max/trimShare + size + keptRowOverhead); total > over {
		t.Fatalf("kept inputs take %d bytes after 80 of %d, want at most %d", total, size, over)
	}
	if len(ids) < 4 || !slices.Equal(ids[:3], []string{"q-000", "q-001", "q-002"}) || ids[3] < "b5" || ids[len(ids)-1] != "b7-009" {
		t.Errorf("kept %v, want the quiet server's three and the flood's newest", ids)
	}
	if n := s.InputsTrimmed(); n != uint64(83-len(ids)) {
		t.Errorf("InputsTrimmed = %d, want the %d of 83 deleted", n, 83-len(ids))
	}
	if err := s.WriteInputs(ctx, []KeptInput{{DecisionID: "nodoc", Server: "flood", Kind: "sampling", Stage: StageRequest,
		Outcome: "blocker", CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	s.KeepInputsBytes = 3*(1024+keptRowOverhead) + 5*(size+keptRowOverhead)
	if _, err := s.Prune(ctx, 0); err != nil {
		t.Fatal(err)
	}
	total, ids = keptSize(t, s)
	want := []string{"q-000", "q-001", "q-002", "b7-006", "b7-007", "b7-008", "b7-009", "nodoc"}
	if total > s.KeepInputsBytes || !slices.Equal(ids, want) {
		t.Errorf("after Prune kept %v (%d bytes), want %v within %d", ids, total, want, s.KeepInputsBytes)
	}
	s.KeepInputsBytes = 0
	if err := s.WriteInputs(ctx, keptBatch("flood", "c", 40, size, time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, ids = keptSize(t, s); len(ids) != 48 {
		t.Errorf("with no bound %d inputs kept, want 48", len(ids))
	}
}

// TestNextCut: the largest server is cut down to the next, by at least
// an equal share of the excess, never more than the excess.
func TestNextCut(t *testing.T) {
	for _, c := range []struct {
		sizes  map[string]int64
		excess int64
		server string
		cut    int64
	}{
		{map[string]int64{"flood": 10000, "quiet": 4000}, 8000, "flood", 6000},
		{map[string]int64{"flood": 10000, "quiet": 4000}, 3000, "flood", 3000},
		{map[string]int64{"a": 5000, "b": 5000}, 4000, "a", 2000},
		{map[string]int64{"b": 5000, "a": 5000, "c": 5000}, 300, "a", keptRowOverhead},
		{map[string]int64{"only": 9000}, 1000, "only", 1000},
		{map[string]int64{"x": 100, "y": 7000, "z": 6900}, 5000, "y", 5000 / 3},
	} {
		if server, cut := nextCut(c.sizes, c.excess); server != c.server || cut != c.cut {
			t.Errorf("nextCut(%v, %d) = %s, %d; want %s, %d", c.sizes, c.excess, server, cut, c.server, c.cut)
		}
	}
}

// TestAFloodTakesNoMoreThanAnEqualShare is the attacker's test of the
// bound's fairness: a quiet server whose inputs take more than the
// flood's when the flood begins keeps at least an equal share of the
// bound through it; the flood's own inputs go first.
func TestAFloodTakesNoMoreThanAnEqualShare(t *testing.T) {
	s, ctx := openStore(t, stateDir(t)), t.Context()
	const size, max = 4096, 64 << 10
	s.KeepInputs, s.KeepInputsBytes = time.Hour, max
	start := time.Now().Add(-20 * time.Minute)
	if err := s.WriteInputs(ctx, keptBatch("quiet", "q", 12, size, start)); err != nil {
		t.Fatal(err)
	}
	for b := range 8 {
		if err := s.WriteInputs(ctx, keptBatch("flood", fmt.Sprintf("b%d", b), 10, size, start.Add(time.Duration(b+1)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Prune(ctx, 0); err != nil {
		t.Fatal(err)
	}
	_, ids := keptSize(t, s)
	quiet := 0
	for _, id := range ids {
		if strings.HasPrefix(id, "q-") {
			quiet++
		}
	}
	share := max / 2 / (size + keptRowOverhead) // 7 of the quiet server's 12
	if quiet < share || len(ids)-quiet > quiet+1 {
		t.Errorf("the quiet server kept %d inputs and the flood %d (%v); want at least %d for the quiet one, and the flood no more than it and one",
			quiet, len(ids)-quiet, ids, share)
	}
}

// BenchmarkTrimInputs trims 61,440 kept inputs of 100-byte documents,
// from three servers, to three quarters of what they take: a scan of
// each server's share, then only the rows deleted. Run on each backend
// (the store suite's second pass is PostgreSQL's) with -benchtime 1x:
//
//	go test -run '^$' -bench BenchmarkTrimInputs -benchtime 1x ./engine/review/
func BenchmarkTrimInputs(b *testing.B) {
	s, err := openBackend(filepath.Join(b.TempDir(), "state"), zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	quiet(b, s)
	ctx := b.Context()
	start := time.Now().Add(-time.Hour)
	var deleted int
	for b.Loop() {
		b.StopTimer()
		if _, err := s.db.ExecContext(ctx, `DELETE FROM decision_inputs`); err != nil {
			b.Fatal(err)
		}
		for n := range 240 {
			if err := s.WriteInputs(ctx, keptBatch(fmt.Sprintf("s%d", n%3), fmt.Sprintf("b%03d", n), 256, 100, start.Add(time.Duration(n)*time.Second))); err != nil {
				b.Fatal(err)
			}
		}
		total, _ := keptSize(b, s)
		b.StartTimer()
		n, err := s.trimInputs(ctx, total*3/4)
		if err != nil {
			b.Fatal(err)
		}
		deleted = n
	}
	b.ReportMetric(float64(deleted), "deleted")
}
