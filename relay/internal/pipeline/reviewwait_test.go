package pipeline

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// waitEngine is an engine whose reviews time out after timeout. It is
// made outside the bubble of the test that uses it: only its review
// timeout is read there.
func waitEngine(t *testing.T, timeout time.Duration) *engine.Engine {
	t.Helper()
	store, err := review.Open(filepath.Join(t.TempDir(), "engine"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	eng, err := engine.New(t.Context(), engine.Config{
		Policy:        engine.PolicyConfig{Dir: "../../../policies", Timeout: time.Second, Data: map[string]any{"default": "review"}},
		ReviewTimeout: timeout,
	}, store, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// waitPipeline is a Pipeline over eng whose store polls every 20ms, and a
// second Store on the same state dir: another process, as the operator's
// CLI is. Both are opened in the calling test's bubble, whose clock they
// then run on.
func waitPipeline(t *testing.T, eng *engine.Engine) (*Pipeline, *review.Store) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	store, err := review.Open(dir, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	store.PollInterval = 20 * time.Millisecond
	cli, err := review.Open(dir, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	// Cleanups run once the test's context has ended, and with it every
	// wait the test left: the poll then finds no waiter at its next tick
	// and stops, before the stores close.
	t.Cleanup(func() { time.Sleep(time.Hour) })
	return New(Deps{Engine: eng, Store: store, Log: zap.NewNop()}), cli
}

// openReview opens a pending request-stage item in p's store.
func openReview(t *testing.T, p *Pipeline) string {
	t.Helper()
	it, err := p.store.Add(t.Context(), review.Item{DecisionID: "dc-test", Server: "peer", Stage: review.StageRequest,
		Request: json.RawMessage(`{"messages":[]}`)}, p.eng.ReviewTimeout())
	if err != nil {
		t.Fatal(err)
	}
	return it.ID
}

// waitResult is what one awaitReview returned, and when.
type waitResult struct {
	sure bool
	at   time.Time
}

func startWait(ctx context.Context, p *Pipeline, id string) chan waitResult {
	out := make(chan waitResult, 1)
	go func() {
		sure := p.awaitReview(ctx, id)
		out <- waitResult{sure: sure, at: time.Now()}
	}()
	return out
}

// TestAwaitReviewSeesAnotherProcessDecide: a decision made through
// another Store wakes its waiter at the next poll; the other waiter sleeps
// on.
func TestAwaitReviewSeesAnotherProcessDecide(t *testing.T) {
	eng := waitEngine(t, time.Minute)
	synctest.Test(t, func(t *testing.T) {
		p, cli := waitPipeline(t, eng)
		a, b := openReview(t, p), openReview(t, p)
		waitA, waitB := startWait(t.Context(), p, a), startWait(t.Context(), p, b)
		time.Sleep(200 * time.Millisecond) // several polls with both waiting
		decided := time.Now()
		if _, err := cli.Approve(t.Context(), a, "alice", ""); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-waitA:
			if !r.sure {
				t.Error("awaitReview reported an unsure wake for a decided item")
			}
			if took := r.at.Sub(decided); took >= 2500*time.Millisecond {
				t.Errorf("the decision was seen after %v: not at the next poll", took)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter on the decided item never woke")
		}
		select {
		case <-waitB:
			t.Error("the waiter on the pending item woke")
		case <-time.After(200 * time.Millisecond):
		}
		if it, err := p.store.Wait(t.Context(), a); err != nil || it.State != review.StateApproved {
			t.Errorf("Store.Wait after the wake = %v, %v; want approved at once", it.State, err)
		}
	})
}

// TestAwaitReviewDecidedBeforeWaiting: an item decided a while before its
// waiter came is seen at once.
func TestAwaitReviewDecidedBeforeWaiting(t *testing.T) {
	eng := waitEngine(t, time.Minute)
	synctest.Test(t, func(t *testing.T) {
		p, cli := waitPipeline(t, eng)
		other := openReview(t, p)
		waitOther := startWait(t.Context(), p, other) // keeps the poll running
		time.Sleep(100 * time.Millisecond)
		id := openReview(t, p)
		if _, err := cli.Reject(t.Context(), id, "alice", "no"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2200 * time.Millisecond)
		select {
		case r := <-startWait(t.Context(), p, id):
			if !r.sure {
				t.Error("awaitReview reported an unsure wake for a decided item")
			}
		case <-time.After(2500 * time.Millisecond):
			t.Fatal("the waiter on an item decided before it came never woke")
		}
		select {
		case <-waitOther:
			t.Error("the waiter on the pending item woke")
		default:
		}
	})
}

// TestAwaitReviewTimeout: a waiter wakes at its review timeout, sure that
// Store.Wait settles the item at once.
func TestAwaitReviewTimeout(t *testing.T) {
	eng := waitEngine(t, 300*time.Millisecond)
	synctest.Test(t, func(t *testing.T) {
		p, _ := waitPipeline(t, eng)
		id := openReview(t, p)
		start := time.Now()
		select {
		case r := <-startWait(t.Context(), p, id):
			if !r.sure {
				t.Error("awaitReview reported an unsure wake at the timeout")
			}
			if took := r.at.Sub(start); took < 250*time.Millisecond {
				t.Errorf("woke after %v, before the timeout", took)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter never woke at its timeout")
		}
		if it, err := p.store.Wait(t.Context(), id); err != nil || it.State != review.StateExpired {
			t.Errorf("Store.Wait after the timeout = %v, %v; want expired at once", it.State, err)
		}
	})
}

// TestAwaitReviewCancelled: a waiter whose context ends wakes at once.
func TestAwaitReviewCancelled(t *testing.T) {
	eng := waitEngine(t, time.Minute)
	synctest.Test(t, func(t *testing.T) {
		p, _ := waitPipeline(t, eng)
		id := openReview(t, p)
		ctx, cancel := context.WithCancel(t.Context())
		wait := startWait(ctx, p, id)
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case r := <-wait:
			if !r.sure {
				t.Error("awaitReview reported an unsure wake on cancellation")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the cancelled waiter never woke")
		}
	})
}

// TestAwaitReviewPollFails: when the queue cannot be read, every waiter
// wakes unsure, so that Store.Wait polls its item itself.
func TestAwaitReviewPollFails(t *testing.T) {
	eng := waitEngine(t, time.Minute)
	synctest.Test(t, func(t *testing.T) {
		p, _ := waitPipeline(t, eng)
		id := openReview(t, p)
		wait := startWait(t.Context(), p, id)
		time.Sleep(100 * time.Millisecond)
		_ = p.store.Close()
		select {
		case r := <-wait:
			if r.sure {
				t.Error("awaitReview reported a sure wake after a failed read")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter never woke after the store failed")
		}
	})
}

// TestAwaitReviewWokenByAnnouncedChange: a change the store announces
// (review.Store.Changed; here a decision through this process's own
// Store, which on PostgreSQL is any replica's) runs the poll at once, not
// at the next poll interval, here an hour away; the other waiter sleeps on.
func TestAwaitReviewWokenByAnnouncedChange(t *testing.T) {
	eng := waitEngine(t, time.Hour)
	synctest.Test(t, func(t *testing.T) {
		p, _ := waitPipeline(t, eng)
		p.store.PollInterval = time.Hour
		a, b := openReview(t, p), openReview(t, p)
		waitA, waitB := startWait(t.Context(), p, a), startWait(t.Context(), p, b)
		waitRegistered(t, p, a, b)
		if _, err := p.store.Approve(t.Context(), a, "alice", ""); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-waitA:
			if !r.sure {
				t.Error("awaitReview reported an unsure wake for a decided item")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter on the decided item did not wake before the next poll")
		}
		select {
		case <-waitB:
			t.Error("the waiter on the pending item woke")
		default:
		}
	})
}

// waitRegistered returns once p waits on every id.
func waitRegistered(t *testing.T, p *Pipeline, ids ...string) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		p.reviews.mu.Lock()
		n := 0
		for _, id := range ids {
			if p.reviews.waiting[id] != nil {
				n++
			}
		}
		p.reviews.mu.Unlock()
		if n == len(ids) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waiting on %d of %d items", n, len(ids))
		}
	}
}

// TestAwaitReviewChangesCoalesced: when the store announces changes
// faster than reads are worth (a decision every millisecond, as under
// load, where on PostgreSQL every replica's every transition is
// announced), the poll does not read the whole queue once per change,
// back to back: reads come at most once per changedReadGap, each waking
// every waiter decided since the last. The waiters' wake times show the
// reads (time is the bubble's, which reads do not advance).
func TestAwaitReviewChangesCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, err := review.Open(filepath.Join(t.TempDir(), "state"), zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		store.PollInterval = time.Hour
		p := &Pipeline{store: store}
		const n = 100
		ids := make([]string, n)
		woke := make([]time.Time, n)
		var wg sync.WaitGroup
		for i := range ids {
			it, err := store.Add(t.Context(), review.Item{DecisionID: "dc-test", Server: "peer", Stage: review.StageRequest,
				Request: json.RawMessage(`{"messages":[]}`)}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = it.ID
			w := p.reviews.add(p, it.ID)
			wg.Go(func() {
				<-w.woken
				woke[i] = time.Now()
			})
		}
		synctest.Wait() // the poll's first read is done
		start := time.Now()
		for _, id := range ids {
			if _, err := store.Approve(t.Context(), id, "alice", ""); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		wg.Wait()
		reads := map[time.Time]bool{}
		for _, at := range woke {
			reads[at] = true
		}
		if most := int(time.Since(start)/changedReadGap) + changedReadBurst + 1; len(reads) > most {
			t.Errorf("%d reads for %d decisions a millisecond apart, want at most %d", len(reads), n, most)
		}
		for i, at := range woke {
			if at.Sub(start) > time.Duration(i)*time.Millisecond+changedReadGap {
				t.Errorf("waiter %d woke %v after its decision, more than %v", i, at.Sub(start)-time.Duration(i)*time.Millisecond, changedReadGap)
			}
		}
		time.Sleep(time.Hour) // the poll finds no waiter at its next tick and stops
	})
}
