package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"
)

// probeReuse is how long one write probe's answer stands for every
// readiness check that asks. Anything that reaches the ops listener can
// ask as often as it likes, and each probe takes the store's write lock
// for a moment: one probe at a time, its answer shared, keeps a flood of
// /readyz from queueing behind decisions' writes. An orchestrator probes
// every few seconds, so a second-old answer is still news to it.
const probeReuse = time.Second

// writeProbe runs one store write probe at a time and shares its answer.
type writeProbe struct {
	reuse   time.Duration // how long an answer stands; 0: probeReuse
	mu      sync.Mutex
	running chan struct{} // closed when the probe in flight ends; nil when none
	at      time.Time     // when the last probe ended
	err     error         // its answer
}

// result is the answer of a probe that ended within probeReuse, or waits for
// the one in flight, or runs one (bounded by timeout). A caller whose ctx
// ends first gets ctx's error, and the probe goes on for the others.
func (p *writeProbe) result(ctx context.Context, timeout time.Duration, writable func(context.Context) error) error {
	p.mu.Lock()
	if p.running == nil && !p.at.IsZero() && time.Since(p.at) < p.reuseFor() {
		defer p.mu.Unlock()
		return p.err
	}
	running := p.running
	if running == nil {
		running = make(chan struct{})
		p.running = running
		go p.run(timeout, writable, running)
	}
	p.mu.Unlock()
	select {
	case <-running:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run probes once, on a context of its own so no one caller's end cuts
// the answer the others wait for, and publishes the answer.
func (p *writeProbe) run(timeout time.Duration, writable func(context.Context) error, done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := writable(ctx)
	if err != nil && ctx.Err() != nil {
		err = errors.Join(errors.New("no answer within the store timeout"), err)
	}
	p.mu.Lock()
	p.err, p.at, p.running = err, time.Now(), nil
	p.mu.Unlock()
	close(done)
}

func (p *writeProbe) reuseFor() time.Duration {
	if p.reuse > 0 {
		return p.reuse
	}
	return probeReuse
}
