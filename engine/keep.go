package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// keepQueueSize bounds the kept inputs waiting for their write. Each
// holds its input document (the request's text among it), so the bound
// is on memory as much as on lag: a few batches, far more than a writer
// that keeps up ever holds. An input that finds the queue full is
// dropped and counted: its decision stands, replay names it as one whose
// input was not kept.
const keepQueueSize = 4 * review.KeepInputsBatch

// keepInterval is how long an input waits for others to share its
// batch's transaction: a fraction of a second, so replay right after a
// decision finds its input.
const keepInterval = 200 * time.Millisecond

// keepWriteTimeout bounds one batch's write, so a store that hangs holds
// the queue (and Close) for no longer.
const keepWriteTimeout = 10 * time.Second

// keeper writes the decisions' kept inputs (Config.KeepInputs) off the
// decisions' own transactions: a decision hands its input over without
// waiting, and one writer stores them in batches (review.WriteInputs), a
// batch when it is full or keepInterval after its first input.
type keeper struct {
	store *review.Store
	log   *zap.Logger

	mu     sync.RWMutex
	closed bool // guarded by mu
	in     chan *review.KeptInput
	flush  chan chan struct{} // a flush asked for, closed once written
	done   chan struct{}      // closed when the writer has stopped

	dropped atomic.Uint64 // inputs not kept: the queue full, or a failed write
	// lost is set while inputs are being lost, so the service log says
	// it once, and again once they are kept again.
	lost atomic.Bool
}

// newKeeper starts a keeper whose queue holds size inputs.
func newKeeper(store *review.Store, log *zap.Logger, size int) *keeper {
	k := idleKeeper(store, log, size)
	go k.run()
	return k
}

// idleKeeper is a keeper whose writer has not started.
func idleKeeper(store *review.Store, log *zap.Logger, size int) *keeper {
	return &keeper{store: store, log: log, in: make(chan *review.KeptInput, size),
		flush: make(chan chan struct{}), done: make(chan struct{})}
}

// offer queues in for writing, never waiting: a full queue, or a keeper
// that has closed, drops it.
func (k *keeper) offer(in *review.KeptInput) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.closed {
		k.drop(1, "stopping")
		return
	}
	select {
	case k.in <- in:
	default:
		k.drop(1, "queue full")
	}
}

// drop counts n inputs that were not kept.
func (k *keeper) drop(n int, why string) {
	k.dropped.Add(uint64(n))
	if !k.lost.Swap(true) {
		k.log.Warn("policy inputs for replay are being dropped; replay names their decisions as not kept",
			zap.String("why", why), zap.Int("inputs", n))
	}
}

// Dropped is how many inputs were not kept since start: the queue was
// full, serve was stopping, or the store refused their write.
func (k *keeper) Dropped() uint64 { return k.dropped.Load() }

// run is the writer: it gathers inputs into a batch and writes it when
// it is full, keepInterval after its first input, on a flush, or when
// the queue closes.
func (k *keeper) run() {
	defer close(k.done)
	batch := make([]review.KeptInput, 0, review.KeepInputsBatch)
	var due <-chan time.Time
	for {
		select {
		case in, ok := <-k.in:
			if !ok {
				k.write(batch)
				return
			}
			if len(batch) == 0 {
				due = time.After(keepInterval)
			}
			if batch = append(batch, *in); len(batch) == review.KeepInputsBatch {
				batch, due = k.write(batch), nil
			}
		case <-due:
			batch, due = k.write(batch), nil
		case ack := <-k.flush:
			batch, due = k.write(k.drain(batch)), nil
			close(ack)
		}
	}
}

// drain adds what is queued now to batch, writing each full batch.
func (k *keeper) drain(batch []review.KeptInput) []review.KeptInput {
	for {
		select {
		case in := <-k.in:
			if batch = append(batch, *in); len(batch) == review.KeepInputsBatch {
				batch = k.write(batch)
			}
		default:
			return batch
		}
	}
}

// write stores batch and returns it emptied; a batch the store refuses
// is lost, counted and logged.
func (k *keeper) write(batch []review.KeptInput) []review.KeptInput {
	if len(batch) == 0 {
		return batch
	}
	ctx, cancel := context.WithTimeout(context.Background(), keepWriteTimeout)
	defer cancel()
	if err := k.store.WriteInputs(ctx, batch); err != nil {
		k.log.Error("keep policy inputs for replay", zap.Int("inputs", len(batch)), zap.Error(err))
		k.drop(len(batch), "store error")
	} else if k.lost.Swap(false) {
		k.log.Info("policy inputs for replay are kept again", zap.Uint64("dropped_since_start", k.Dropped()))
	}
	clear(batch)
	return batch[:0]
}

// Flush writes every input queued before it was called, and returns once
// they are written (or dropped).
func (k *keeper) Flush() {
	ack := make(chan struct{})
	select {
	case k.flush <- ack:
		<-ack
	case <-k.done:
	}
}

// close stops taking inputs and returns once those queued are written.
func (k *keeper) close() {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		<-k.done
		return
	}
	k.closed = true
	close(k.in)
	k.mu.Unlock()
	<-k.done
}

// keep hands a stored decision's kept input (nil: none) to the keeper.
func (e *Engine) keep(in *review.KeptInput) {
	if in != nil {
		e.keeper.offer(in)
	}
}

// InputsDropped is how many decisions' inputs for replay were not kept
// since start (a full queue, serve stopping, a failed write); 0 when
// none are kept.
func (e *Engine) InputsDropped() uint64 {
	if e.keeper == nil {
		return 0
	}
	return e.keeper.Dropped()
}
