package review

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
)

// TestScenario interleaves add, approve, reject, finish, cancelled waits,
// the passing of time, clean reopens and process crashes across two Stores
// on one dir, seed by seed, and checks every answer against a model. At the
// end no item is lost, none was decided twice, and every history walks only
// the allowed moves.
var scenarioSeeds = flag.Int("scenario.seeds", 24, "seeds TestScenario runs (0, 1, ... n-1)")

func TestScenario(t *testing.T) {
	seen := map[string]int{}
	for seed := range int64(*scenarioSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			dir := stateDir(t)
			synctest.Test(t, func(t *testing.T) {
				sc := newScenario(t, dir, seed)
				defer sc.close()
				for step := range 120 {
					sc.step(step)
				}
				sc.checkEnd()
				for k, n := range sc.seen {
					seen[k] += n
				}
			})
		})
	}
	// The seeds must reach every interesting outcome, or the test proves
	// less than it claims.
	for _, k := range []string{"approved", "rejected", "delivered", "failed",
		"lost to approved", "lost to rejected", "lost to expired", "lost to abandoned",
		"lost to delivered", "lost to failed", "finish pending", "cancelled pending",
		"crash", "reopen", "not found"} {
		if seen[k] == 0 {
			t.Errorf("no seed reached %q; outcomes: %v", k, seen)
		}
	}
}

// modelItem is what the scenario expects the store to hold for one item.
type modelItem struct {
	state   State
	by      string
	owner   string
	expires time.Time
}

type scenario struct {
	t      *testing.T
	rng    *rand.Rand
	dir    string
	stores [2]*Store
	procs  int             // owner tokens handed out so far
	dead   map[string]bool // owner tokens of crashed "processes"
	model  map[string]*modelItem
	ids    []string
	seen   map[string]int // outcomes reached, so the test can tell it covered them
}

func newScenario(t *testing.T, dir string, seed int64) *scenario {
	sc := &scenario{t: t, rng: rand.New(rand.NewSource(seed)), dir: dir,
		dead: map[string]bool{}, model: map[string]*modelItem{}, seen: map[string]int{}}
	for k := range sc.stores {
		sc.open(k, sc.newProc())
	}
	return sc
}

func (sc *scenario) newProc() string {
	sc.procs++
	return fmt.Sprintf("proc-%d", sc.procs)
}

func (sc *scenario) open(k int, owner string) {
	s, err := openBackend(sc.dir, zap.NewNop())
	if err != nil {
		sc.t.Fatalf("open store %d: %v", k, err)
	}
	quiet(sc.t, s)
	s.owner = owner
	s.alive = func(_ context.Context, _ rowReader, tok string) bool { return !sc.dead[tok] }
	sc.stores[k] = s
}

func (sc *scenario) close() {
	for _, s := range sc.stores {
		s.Close()
	}
}

func (sc *scenario) step(n int) {
	k := sc.rng.Intn(2)
	switch r := sc.rng.Intn(100); {
	case r < 25:
		sc.add(k)
	case r < 40:
		sc.decide(k, StateApproved, fmt.Sprintf("op-%d-%d", k, n))
	case r < 50:
		sc.decide(k, StateRejected, fmt.Sprintf("op-%d-%d", k, n))
	case r < 60:
		sc.finish(k)
	case r < 65:
		sc.cancelWait(k)
	case r < 75:
		sc.get(k)
	case r < 80:
		sc.listPending(k)
	case r < 90:
		time.Sleep(time.Duration(sc.rng.Intn(60)) * time.Millisecond)
	case r < 95:
		sc.seen["reopen"]++
		sc.stores[k].Close()
		sc.open(k, sc.stores[k].owner) // same process, store reopened
	default:
		sc.seen["crash"]++
		sc.dead[sc.stores[k].owner] = true // the process dies...
		sc.stores[k].Close()
		sc.open(k, sc.newProc()) // ...and a new one starts
	}
}

func (sc *scenario) add(k int) {
	timeout := []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, time.Hour}[sc.rng.Intn(3)]
	it, err := sc.stores[k].Add(context.Background(), sampleItem(fmt.Sprint("srv", k)), timeout)
	if err != nil {
		sc.t.Fatalf("add: %v", err)
	}
	if !it.ExpiresAt.Equal(time.Now().Add(timeout)) {
		sc.t.Fatalf("add: expires %v, want now+%v", it.ExpiresAt, timeout)
	}
	sc.ids = append(sc.ids, it.ID)
	sc.model[it.ID] = &modelItem{state: StatePending, owner: sc.stores[k].owner, expires: it.ExpiresAt}
}

// pick returns a known id, or now and then one the store never held.
func (sc *scenario) pick() (string, *modelItem) {
	if len(sc.ids) == 0 || sc.rng.Intn(20) == 0 {
		return "rv-ffffffffffffffff", nil
	}
	id := sc.ids[sc.rng.Intn(len(sc.ids))]
	m := sc.model[id]
	sc.settle(m, time.Now())
	return id, m
}

// settle is the model of due: what any read does to an item first.
func (sc *scenario) settle(m *modelItem, t time.Time) {
	switch {
	case m.state == StatePending && !t.Before(m.expires):
		m.state = StateExpired
	case m.state == StatePending && sc.dead[m.owner]:
		m.state = StateAbandoned
	case m.state == StateApproved && sc.dead[m.owner]:
		m.state = StateFailed
	}
}

func (sc *scenario) decide(k int, to State, by string) {
	id, m := sc.pick()
	var it Item
	var err error
	if to == StateApproved {
		it, err = sc.stores[k].Approve(context.Background(), id, by, "")
	} else {
		it, err = sc.stores[k].Reject(context.Background(), id, by, "")
	}
	switch {
	case m == nil:
		sc.wantNotFound(err, id)
	case m.state == StatePending:
		if err != nil || it.State != to || it.DecidedBy != by {
			sc.t.Fatalf("%s %s by %s: %s by %q, %v; want it to win", to, id, by, it.State, it.DecidedBy, err)
		}
		m.state, m.by = to, by
		sc.seen[string(to)]++
	default:
		sc.wantDecided(err, id, m)
	}
}

func (sc *scenario) finish(k int) {
	id, m := sc.pick()
	st := []State{StateDelivered, StateFailed}[sc.rng.Intn(2)]
	it, err := sc.stores[k].Finish(context.Background(), id, st, "")
	switch {
	case m == nil:
		sc.wantNotFound(err, id)
	case m.state == StateApproved:
		if err != nil || it.State != st {
			sc.t.Fatalf("finish %s as %s: %s, %v", id, st, it.State, err)
		}
		m.state = st
		sc.seen[string(st)]++
	case m.state == StatePending:
		if !errors.Is(err, ErrNotApproved) {
			sc.t.Fatalf("finish pending %s: %v, want ErrNotApproved", id, err)
		}
		sc.seen["finish pending"]++
	default:
		sc.wantDecided(err, id, m)
	}
}

func (sc *scenario) cancelWait(k int) {
	id, m := sc.pick()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	it, err := sc.stores[k].Wait(ctx, id)
	if m == nil {
		sc.wantNotFound(err, id)
		return
	}
	if m.state == StatePending {
		m.state = StateAbandoned
		sc.seen["cancelled pending"]++
	}
	if !errors.Is(err, context.Canceled) || it.State != m.state {
		sc.t.Fatalf("cancelled wait on %s: %s, %v; want %s and context.Canceled", id, it.State, err, m.state)
	}
}

func (sc *scenario) get(k int) {
	id, m := sc.pick()
	it, err := sc.stores[k].Get(context.Background(), id)
	if m == nil {
		sc.wantNotFound(err, id)
		return
	}
	if err != nil || it.State != m.state || it.DecidedBy != m.by {
		sc.t.Fatalf("get %s: %s by %q, %v; want %s by %q", id, it.State, it.DecidedBy, err, m.state, m.by)
	}
}

func (sc *scenario) listPending(k int) {
	items, err := sc.stores[k].List(context.Background(), Filter{})
	if err != nil {
		sc.t.Fatal(err)
	}
	var got, want []string
	for _, it := range items {
		got = append(got, it.ID)
	}
	t := time.Now()
	for _, id := range sc.ids {
		m := sc.model[id]
		sc.settle(m, t)
		if m.state == StatePending {
			want = append(want, id)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		sc.t.Fatalf("pending list (-model +store):\n%s", diff)
	}
}

func (sc *scenario) wantNotFound(err error, id string) {
	if !errors.Is(err, ErrNotFound) {
		sc.t.Fatalf("%s: %v, want ErrNotFound", id, err)
	}
	sc.seen["not found"]++
}

func (sc *scenario) wantDecided(err error, id string, m *modelItem) {
	var de *DecidedError
	if !errors.As(err, &de) || de.Item.State != m.state || de.Item.DecidedBy != m.by {
		sc.t.Fatalf("%s: %v; want a DecidedError for %s by %q", id, err, m.state, m.by)
	}
	sc.seen["lost to "+string(m.state)]++
}

// moves is the state machine: every history row must be one of these.
var moves = map[State][]State{
	"":            {StatePending},
	StatePending:  {StateApproved, StateRejected, StateExpired, StateAbandoned},
	StateApproved: {StateDelivered, StateFailed},
}

func (sc *scenario) checkEnd() {
	items, err := sc.stores[0].List(context.Background(), Filter{All: true})
	if err != nil {
		sc.t.Fatal(err)
	}
	got := map[string]State{}
	for _, it := range items {
		got[it.ID] = it.State
		sc.checkHistory(it)
	}
	want := map[string]State{}
	t := time.Now()
	for id, m := range sc.model {
		sc.settle(m, t)
		want[id] = m.state
	}
	if diff := cmp.Diff(want, got); diff != "" {
		sc.t.Errorf("final states (-model +store):\n%s", diff)
	}
	sc.checkAudit(items)
}

// checkAudit: the audit chain verifies and holds exactly one entry per
// history row, whatever crashed or raced on the way.
func (sc *scenario) checkAudit(items []Item) {
	ctx := context.Background()
	_, n, err := sc.stores[1].VerifyAudit(ctx)
	if err != nil {
		sc.t.Fatalf("audit chain: %v", err)
	}
	rows := 0
	for _, it := range items {
		h, _ := sc.stores[1].History(ctx, it.ID)
		rows += len(h)
	}
	if n != rows {
		sc.t.Errorf("audit has %d entries for %d history rows", n, rows)
	}
}

func (sc *scenario) checkHistory(it Item) {
	h, err := sc.stores[1].History(context.Background(), it.ID)
	if err != nil {
		sc.t.Fatal(err)
	}
	at := State("")
	for _, tr := range h {
		if tr.From != at || !allowed(tr.From, tr.To) {
			sc.t.Errorf("%s: history row %s -> %s after %s: %v", it.ID, tr.From, tr.To, at, h)
		}
		at = tr.To
	}
	if at != it.State {
		sc.t.Errorf("%s: history ends at %s, item is %s", it.ID, at, it.State)
	}
}

func allowed(from, to State) bool {
	for _, s := range moves[from] {
		if s == to {
			return true
		}
	}
	return false
}
