package review

import (
	"context"
	"sync"
	"time"
)

// replica is what a Store on PostgreSQL keeps to be one of several
// replicas sharing the queue, and what its lease and its listener share:
// the server's URL, the lease's length, and the background work Close
// stops. On SQLite it stays zero.
type replica struct {
	// connURL is store.url as given (with its password, never shown), for
	// the listener's and the lease's own connections.
	connURL string
	// lease is how long this Store's lease lasts unrenewed (leases).
	lease time.Duration
	// bgCtx ends at Close, which waits for bg: the listener and the
	// lease's heartbeat.
	bgCtx     context.Context
	bgStop    context.CancelFunc
	bg        sync.WaitGroup
	closeOnce sync.Once
}
