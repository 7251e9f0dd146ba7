package review

import (
	"sync"
	"time"
)

// dues holds, for each item this Store opened and nobody has waited out
// yet, its deadline on the monotonic clock (see Wait): in memory only, so
// a stepped wall clock cannot move it.
type dues struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// set remembers the monotonic deadline of an item this Store opened.
func (d *dues) set(id string, due time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m[id] = due
}

// take returns, and forgets, the monotonic deadline of an item this
// Store opened; zero for any other. The item's waiter takes it once.
func (d *dues) take(id string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	due := d.m[id]
	delete(d.m, id)
	return due
}
