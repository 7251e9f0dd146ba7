package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// cliOperator works the shared queue as operators at their shells do: it
// reads what is pending and decides each item with `mcpx-fw review
// approve` or `reject`, a subprocess per decision, each against the
// config of one replica in turn (they name one store).
type cliOperator struct {
	st   *review.Store
	cfgs []string
	// decide gives the review subcommand and its arguments for an item
	// ("approve", id…), or nil to leave it pending.
	decide  func(it review.Item) []string
	workers int

	handled map[string]bool // items given to a worker; read by operate's loop only
	runs    atomic.Int64
}

// operate decides every pending item decide names, polling the store,
// until ctx ends. If it cannot, it calls abort (nobody else would decide
// the escalations) and reports why.
func (o *cliOperator) operate(ctx context.Context, abort func()) <-chan error {
	done := make(chan error, 1)
	work := make(chan review.Item)
	var wg sync.WaitGroup
	fail := func(err error) {
		select {
		case done <- err:
			abort()
		default:
		}
	}
	for w := range o.workers {
		wg.Go(func() {
			for it := range work {
				args := append(o.decide(it), "--config", o.cfgs[(int(o.runs.Add(1))+w)%len(o.cfgs)])
				res := runQuiet(ctx, args...)
				if ctx.Err() != nil {
					return
				}
				if res.code != 0 {
					fail(fmt.Errorf("operator: mcpx-fw %v: exit %d: %s", args, res.code, res.stderr))
				}
			}
		})
	}
	go func() {
		defer close(done)
		defer wg.Wait()
		defer close(work)
		for {
			items, err := o.st.List(ctx, review.Filter{})
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				fail(fmt.Errorf("operator: list: %w", err))
				return
			}
			for _, it := range items {
				if o.handled[it.ID] || o.decide(it) == nil {
					continue
				}
				o.handled[it.ID] = true
				select {
				case work <- it:
				case <-ctx.Done():
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return done
}

// newCLIOperator is an operator of cfgs' store with a few shells at once.
func newCLIOperator(st *review.Store, cfgs []string, decide func(review.Item) []string) *cliOperator {
	return &cliOperator{st: st, cfgs: cfgs, decide: decide, workers: 4, handled: map[string]bool{}}
}

// decideByKind approves or rejects a load request's review as its kind
// says.
func (r *loadRun) decideByKind(it review.Item) []string {
	r.mu.Lock()
	q := r.requests[string(loadIDPattern.Find(it.Request))]
	r.mu.Unlock()
	switch {
	case q == nil:
		return nil
	case q.kind.review == review.StateDelivered:
		return []string{"review", "approve", it.ID}
	default:
		return []string{"review", "reject", it.ID, "--reason", "not under load"}
	}
}
