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
	waiting map[string]chan struct{} // closed when the item is no longer pending
	polling bool
}

// awaitReview waits until review id is no longer pending, its review
// timeout passes (on this process's clock), or ctx ends, and returns what
// Store.Wait makes of it then. A decision made through this process's own
// Store is seen at the next poll rather than at once; operators decide
// from other processes, which Store.Wait also only sees by polling.
func (p *Proxy) awaitReview(ctx context.Context, id string) (review.Item, error) {
	woken := p.reviews.add(p, id)
	timeout := time.NewTimer(p.eng.ReviewTimeout())
	defer timeout.Stop()
	select {
	case <-woken:
	case <-ctx.Done():
	case <-timeout.C:
	}
	p.reviews.remove(id, woken)
	return p.store.Wait(ctx, id)
}

// add registers a waiter on id and starts the poll if none is running.
func (w *reviewWaits) add(p *Proxy, id string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting == nil {
		w.waiting = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	w.waiting[id] = ch
	if !w.polling {
		w.polling = true
		go w.poll(p)
	}
	return ch
}

// remove unregisters the waiter that add returned ch to, if still there.
func (w *reviewWaits) remove(id string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting[id] == ch {
		delete(w.waiting, id)
	}
}

// poll lists the pending items every poll interval while anyone waits,
// and wakes the waiters whose item is not among them. Only items already
// waited on when the list was read are judged, so an item added meanwhile
// is never taken for decided. A failed list wakes everyone: Store.Wait
// then polls each item itself, as it would without this.
func (w *reviewWaits) poll(p *Proxy) {
	interval := p.store.PollInterval
	if interval <= 0 {
		interval = review.DefaultPollInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for range tick.C {
		ids := w.snapshot()
		if ids == nil {
			return
		}
		items, err := p.store.List(context.Background(), review.Filter{})
		pending := make(map[string]bool, len(items))
		for _, it := range items {
			pending[it.ID] = true
		}
		w.wake(ids, func(id string) bool { return err != nil || !pending[id] })
	}
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

// wake closes the channels of the ids that settled says are settled.
func (w *reviewWaits) wake(ids []string, settled func(string) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if ch, ok := w.waiting[id]; ok && settled(id) {
			close(ch)
			delete(w.waiting, id)
		}
	}
}
