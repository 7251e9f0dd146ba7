package pipeline

import (
	"context"
	"runtime"
	"sync"
)

// workers runs the firewall's work on sampling requests on a few
// long-lived workers: describing a request for the engine, the engine's
// decisions (validation, policy evaluation, a SQLite commit) and the
// settlement of a review. That work has a deep stack, and the goroutine
// that asks for it (the SDK's handler of the request) may then wait for
// minutes, on a review or on the host's model. Run there, it would leave
// that goroutine holding a grown stack for the whole wait, and a burst of
// pushes would run all of it at once, swelling the heap with its transient
// garbage: both stay resident (with a thousand reviews pending, tens of
// MiB; BENCHMARKS.md, P4). Workers keep their grown stacks, so the work
// does not grow a fresh one either. It only contends for the same cores
// and the store's one writer, so more at once would not finish any sooner.
type workers struct {
	start, stop sync.Once
	work        chan func()
	done        chan struct{} // closed by close: the workers are gone
}

// workerCount allows two decisions per core at once, so one waiting on
// the store's write lock does not leave a core idle.
func workerCount() int { return 2 * runtime.GOMAXPROCS(0) }

// do runs job on a worker, starting them on first use, and returns when
// it has run. A request whose context ends while it waits for one, or that
// comes after close, runs job at once on a goroutine of its own, as it
// would without the workers: the engine records what becomes of a
// cancelled request. job passes its results back through the variables it
// captures.
func (j *workers) do(ctx context.Context, job func()) {
	j.start.Do(j.run)
	done := make(chan struct{})
	run := func() {
		defer close(done)
		job()
	}
	select {
	case j.work <- run:
	case <-ctx.Done():
		go run()
	case <-j.done:
		go run()
	}
	<-done
}

func (j *workers) run() {
	j.work, j.done = make(chan func()), make(chan struct{})
	for range workerCount() {
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
func (j *workers) close() {
	j.start.Do(j.run)
	j.stop.Do(func() { close(j.done) })
}
