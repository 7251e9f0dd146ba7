package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// reviewWaits lets every request this process holds for review wait on one
// shared poll of the queue, run at once when the store announces a change
// and otherwise every poll interval. review.Store.Wait polls its own item, one query
// per waiter every poll interval: with a thousand requests pending that is
// four thousand queries a second, which saturates the store's few
// connections, so new escalations starve and serve burns a core doing
// nothing (BENCHMARKS.md, P4). Here one goroutine reads the ids of the
// pending items each interval (review.Store.PendingIDs, which decodes no
// item) and wakes the waiters whose item left them; each then
// calls Store.Wait, which returns at once with the item as stored, so the
// store keeps every rule about how a review ends (decided, expired,
// abandoned when the request is cancelled).
type reviewWaits struct {
	mu      sync.Mutex
	waiting map[string]*reviewWaiter
	polling bool
}

// changedReadGap spaces out the reads a store's announcements start. On
// PostgreSQL every transition of every item on any replica is announced,
// and each read lists the whole queue: under load, one read per
// announcement would have the poll read back to back, a connection and a
// share of a core for nothing new. Reads run at one per changedReadGap
// on average, at most 100 a second; a decision announced sooner waits its
// turn and joins every other change made meanwhile in one read.
// changedReadBurst reads may run at once after a quiet spell, so that a
// request, its escalation's own announcement and a quick decision are not
// kept waiting for the spacing meant for load.
const (
	changedReadGap   = 10 * time.Millisecond
	changedReadBurst = 2
)

// reviewWaiter is one request waiting on the poll.
type reviewWaiter struct {
	woken chan struct{} // closed when the poll or the timeout wakes it
	// unsure is set before woken closes when the poll could not tell
	// whether the item is still pending.
	unsure bool
}

// awaitReview waits until review id is no longer pending, its review
// timeout passes (on this process's clock), or ctx ends. Store.Wait then
// says what became of it, at once: awaitReview reports true. It reports
// false when the poll failed and could not tell, and Store.Wait must poll
// the item itself. The timeout
// wakes the waiter as the poll does, so that a waiting goroutine blocks on
// two channels, not three, and its timer has no channel of its own.
func (p *Pipeline) awaitReview(ctx context.Context, id string) bool {
	w := p.reviews.add(p, id)
	timeout := time.AfterFunc(p.eng.ReviewTimeout(), func() { p.reviews.timeUp(id, w) })
	defer timeout.Stop()
	select {
	case <-w.woken:
	case <-ctx.Done():
	}
	if p.reviews.remove(id, w) {
		return true // ctx ended
	}
	return !w.unsure
}

// add registers a waiter on id and starts the poll if none is running.
func (w *reviewWaits) add(p *Pipeline, id string) *reviewWaiter {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting == nil {
		w.waiting = map[string]*reviewWaiter{}
	}
	rw := &reviewWaiter{woken: make(chan struct{})}
	w.waiting[id] = rw
	if !w.polling {
		w.polling = true
		go w.poll(p)
	}
	return rw
}

// timeUp wakes rw at its review timeout, if it still waits.
func (w *reviewWaits) timeUp(id string, rw *reviewWaiter) {
	if w.remove(id, rw) {
		close(rw.woken)
	}
}

// remove unregisters rw, unless it was woken (and so removed) already, and
// reports whether it did.
func (w *reviewWaits) remove(id string, rw *reviewWaiter) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting[id] != rw {
		return false
	}
	delete(w.waiting, id)
	return true
}

// poll wakes the waiters whose item is no longer pending, while anyone
// waits: at once when the store announces a change (Store.Changed: on
// PostgreSQL any replica's decision, on SQLite this process's own; no
// sooner than changedReadGap after the last read), and
// every poll interval for what it does not announce (on SQLite another
// process's decision; on PostgreSQL only a safety net, its PollInterval
// is long). Only items already waited on when it looks are judged, so an
// item added meanwhile is never taken for decided. A failed read wakes
// everyone, marked unsure: Store.Wait then polls each item itself, as it
// would without this.
func (w *reviewWaits) poll(p *Pipeline) {
	tick := time.NewTicker(p.pollInterval())
	defer tick.Stop()
	changed := p.store.Changed()
	var due time.Time // when the reads so far would have ended, at one per changedReadGap
	for first := true; ; first = false {
		if !first { // the first read is at once: the item may have been decided before its waiter came
			select {
			case <-tick.C:
			case <-changed:
				time.Sleep(time.Until(due.Add(-changedReadBurst * changedReadGap))) // changes meanwhile join this read
			}
			changed = p.store.Changed() // before the read: a change during it polls again
		}
		due = later(due, time.Now()).Add(changedReadGap)
		ids := w.snapshot()
		if ids == nil {
			return
		}
		pending, err := p.store.PendingIDs(context.Background())
		w.wake(ids, err, pending)
	}
}

// pollInterval is how often this process's polls of the store run when
// nothing announces a change: the store's PollInterval, or its default.
func (p *Pipeline) pollInterval() time.Duration {
	if p.store.PollInterval > 0 {
		return p.store.PollInterval
	}
	return review.DefaultPollInterval
}

// snapshot lists the items waited on, or stops the poll (nil) when there
// are none: the next add starts another.
func (w *reviewWaits) snapshot() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.waiting) == 0 {
		w.polling = false
		return nil
	}
	ids := make([]string, 0, len(w.waiting))
	for id := range w.waiting {
		ids = append(ids, id)
	}
	return ids
}

// wake wakes the waiters on the ids that are not pending, or all of them
// when the read failed (err), marked unsure.
func (w *reviewWaits) wake(ids []string, err error, pending map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		rw, ok := w.waiting[id]
		if !ok || (err == nil && pending[id]) {
			continue
		}
		rw.unsure = err != nil
		close(rw.woken)
		delete(w.waiting, id)
	}
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
