package relay

import (
	"context"
	"runtime"
	"sync"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// judging runs the engine's decisions on sampling requests on a few
// long-lived workers. A decision is CPU work (validation, policy
// evaluation, a SQLite commit) with a deep stack, and the goroutine that
// asks for it may then wait for minutes, on a review or on the host's
// model. Run there, it would leave that goroutine holding a grown stack for
// the whole wait, and a burst of pushes would run every decision at once,
// swelling the heap with their transient garbage: both stay resident (with
// a thousand reviews pending, 16 MiB more; BENCHMARKS.md, P4). Workers
// keep their grown stacks, so a decision does not grow a fresh one
// either. Decisions only contend for the same cores and the store's one
// writer, so more at once would not finish any sooner.
type judging struct {
	start, stop sync.Once
	work        chan func()
	done        chan struct{} // closed by close: the workers are gone
}

// judgingWorkers allows two decisions per core at once, so one waiting on
// the store's write lock does not leave a core idle.
func judgingWorkers() int { return 2 * runtime.GOMAXPROCS(0) }

// judge runs decide on a worker, starting them on first use. A request
// whose context ends while it waits for one, or that comes after close, is
// decided at once on a goroutine of its own, as it would be without the
// workers: the engine records what becomes of a cancelled request.
func (j *judging) judge(ctx context.Context, decide func() engine.Verdict) engine.Verdict {
	j.start.Do(j.run)
	out := make(chan engine.Verdict, 1)
	job := func() { out <- decide() }
	select {
	case j.work <- job:
	case <-ctx.Done():
		go job()
	case <-j.done:
		go job()
	}
	return <-out
}

func (j *judging) run() {
	j.work, j.done = make(chan func()), make(chan struct{})
	for range judgingWorkers() {
		go func() {
			for {
				select {
				case job := <-j.work:
					job()
				case <-j.done:
					return
				}
			}
		}()
	}
}

// close stops the workers once they finish what they run.
func (j *judging) close() {
	j.start.Do(j.run)
	j.stop.Do(func() { close(j.done) })
}
