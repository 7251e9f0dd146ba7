package review

import "sync"

// wakeups are this Store's waiters' wake-up channels, one per item, and
// the channel Changed hands out: closed at each committed change this
// Store learns of at once. In memory only; they touch no table.
type wakeups struct {
	waitMu  sync.Mutex
	waiters map[string]*waitSlot

	// changed is closed and replaced at every change this Store learns of
	// at once (Changed).
	changeMu sync.Mutex
	changed  chan struct{}
}

func newWakeups() wakeups {
	return wakeups{waiters: make(map[string]*waitSlot), changed: make(chan struct{})}
}

// waitSlot is the wake-up channel shared by this Store's waiters on one
// item; refs counts them so the last one out removes it from the map.
type waitSlot struct {
	ch   chan struct{}
	refs int
}

func (w *wakeups) subscribe(id string) *waitSlot {
	w.waitMu.Lock()
	defer w.waitMu.Unlock()
	slot := w.waiters[id]
	if slot == nil {
		slot = &waitSlot{ch: make(chan struct{})}
		w.waiters[id] = slot
	}
	slot.refs++
	return slot
}

func (w *wakeups) unsubscribe(id string, slot *waitSlot) {
	w.waitMu.Lock()
	defer w.waitMu.Unlock()
	slot.refs--
	if slot.refs == 0 && w.waiters[id] == slot {
		delete(w.waiters, id)
	}
}

// notify wakes this Store's waiters on id after a committed change, and
// whoever waits on Changed.
func (w *wakeups) notify(id string) {
	w.waitMu.Lock()
	if slot := w.waiters[id]; slot != nil {
		close(slot.ch)
		delete(w.waiters, id)
	}
	w.waitMu.Unlock()
	w.signalChanged()
}

// wake wakes this Store's waiters on id only: a handover's event, which
// changes no item.
func (w *wakeups) wake(id string) {
	w.waitMu.Lock()
	defer w.waitMu.Unlock()
	if slot := w.waiters[id]; slot != nil {
		close(slot.ch)
		delete(w.waiters, id)
	}
}

// current is the channel the next change closes.
func (w *wakeups) current() <-chan struct{} {
	w.changeMu.Lock()
	defer w.changeMu.Unlock()
	return w.changed
}

// signalChanged closes the channel Changed handed out and makes a new one.
func (w *wakeups) signalChanged() {
	w.changeMu.Lock()
	defer w.changeMu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
}

// wakeAll wakes every waiter of this Store to re-read its item.
func (w *wakeups) wakeAll() {
	w.waitMu.Lock()
	for id, slot := range w.waiters {
		close(slot.ch)
		delete(w.waiters, id)
	}
	w.waitMu.Unlock()
	w.signalChanged()
}
