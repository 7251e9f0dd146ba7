package relay

import (
	"context"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// reviewWaits lets every request this process holds for review wait on one
// shared poll of the queue. review.Store.Wait polls its own item, one query
// per waiter every poll interval: with a thousand requests pending that is
// four thousand queries a second, which saturates the store's few
// connections, so new escalations starve and serve burns a core doing
// nothing (BENCHMARKS.md, P4). Here one goroutine lists the pending items
// each interval and wakes the waiters whose item left the list; each then
// calls Store.Wait, which returns at once with the item as stored, so the
// store keeps every rule about how a review ends (decided, expired,
// abandoned when the request is cancelled).
type reviewWaits struct {
	mu      sync.Mutex
	waiting map[string]*reviewWaiter
	polling bool
}

// reviewWaiter is one request waiting on the poll.
type reviewWaiter struct {
	woken chan struct{} // closed when the poll or the timeout wakes it
	// unsure is set before woken closes when the poll could not tell
	// whether the item is still pending.
	unsure bool
	listed bool // a full list has seen it pending (see poll)
}

// awaitReview waits until review id is no longer pending, its review
// timeout passes (on this process's clock), or ctx ends. Store.Wait then
// says what became of it, at once: awaitReview reports true. It reports
// false when the poll failed and could not tell, and Store.Wait must poll
// the item itself. A decision made through this process's own Store is
// seen at the next poll rather than at once; operators decide from other
// processes, which Store.Wait also only sees by polling. The timeout
// wakes the waiter as the poll does, so that a waiting goroutine blocks on
// two channels, not three, and its timer has no channel of its own.
func (p *Proxy) awaitReview(ctx context.Context, id string) bool {
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
func (w *reviewWaits) add(p *Proxy, id string) *reviewWaiter {
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

// poll wakes the waiters whose item is no longer pending, every poll
// interval while anyone waits. Only items already waited on when it looks
// are judged, so an item added meanwhile is never taken for decided. A
// failed read wakes everyone: Store.Wait then polls each item itself, as
// it would without this.
//
// Listing the queue reads and decodes every pending item: with a thousand
// pending, four lists a second are most of serve's CPU while it waits and
// about 20 MB of garbage a second, which keeps its heap at the collector's
// goal (BENCHMARKS.md, P4). So the queue is listed in full only when a
// waiter arrived since the last list (its item may have been decided
// before it was registered) and every fullListEvery. In between, the poll
// reads the audit log from the last list on: every transition of an item
// appends an entry in the transaction that makes it, so a decision shows
// as an entry whose outcome is not pending, and with nothing decided the
// read returns nothing. An entry's time is its writer's wall clock, read
// inside that transaction; auditSlack allows for its commit, and the full
// list for a wall clock stepped back further.
func (w *reviewWaits) poll(p *Proxy) {
	interval := p.store.PollInterval
	if interval <= 0 {
		interval = review.DefaultPollInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var listed time.Time // when the last full list that succeeded began; zero for none
	for range tick.C {
		ids, arrived := w.snapshot()
		if ids == nil {
			return
		}
		if !arrived && !listed.IsZero() && time.Since(listed) < fullListEvery {
			w.readAudit(p, ids, listed.Add(-auditSlack))
			continue
		}
		start := time.Now()
		listed = time.Time{}
		if w.list(p, ids) {
			listed = start
		}
	}
}

// fullListEvery bounds the time between full lists of the queue (see
// poll); auditSlack is how far before the last list the audit log is read.
const (
	fullListEvery = 5 * time.Second
	auditSlack    = 2 * time.Second
)

// list wakes the waiters on ids whose item is not among the pending ones,
// marks the others as listed, and reports whether the list succeeded.
func (w *reviewWaits) list(p *Proxy, ids []string) bool {
	items, err := p.store.List(context.Background(), review.Filter{})
	pending := make(map[string]bool, len(items))
	for _, it := range items {
		pending[it.ID] = true
	}
	w.wake(ids, err, func(id string) bool { return !pending[id] }, true)
	return err == nil
}

// readAudit wakes the waiters on ids whose item has an entry in the audit
// log since since that left it in another state than pending.
func (w *reviewWaits) readAudit(p *Proxy, ids []string, since time.Time) {
	entries, err := p.store.Audit(context.Background(), review.AuditFilter{Since: since})
	ended := map[string]bool{}
	for _, e := range entries {
		if e.Outcome != review.StatePending {
			ended[e.ItemID] = true
		}
	}
	w.wake(ids, err, func(id string) bool { return ended[id] }, false)
}

// snapshot lists the items waited on, and whether any of them arrived
// since the last full list; or stops the poll (nil) when there are none:
// the next add starts another.
func (w *reviewWaits) snapshot() (ids []string, arrived bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.waiting) == 0 {
		w.polling = false
		return nil, false
	}
	ids = make([]string, 0, len(w.waiting))
	for id, rw := range w.waiting {
		ids = append(ids, id)
		arrived = arrived || !rw.listed
	}
	return ids, arrived
}

// wake wakes the waiters on the ids that ended says are no longer pending,
// or all of them when the read failed (err), marked unsure. After a full
// list (listing), the others are marked listed.
func (w *reviewWaits) wake(ids []string, err error, ended func(string) bool, listing bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		rw, ok := w.waiting[id]
		switch {
		case !ok:
		case err != nil || ended(id):
			rw.unsure = err != nil
			close(rw.woken)
			delete(w.waiting, id)
		case listing:
			rw.listed = true
		}
	}
}
