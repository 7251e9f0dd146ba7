package engine

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// shadowQueueSize bounds the decisions waiting for the shadow. Each holds
// its input document (the request's text among it), so the bound is on
// memory as much as on lag: 256 decisions is seconds of a busy serve's
// traffic, far more than a shadow that keeps up ever holds. A decision
// that finds the queue full is logged at once without the shadow's
// result, and counted as dropped.
const shadowQueueSize = 256

// shadowDrainTimeout is how long Close lets the shadow finish the
// decisions it holds; past it, those left are logged as not evaluated
// (their lines are never lost).
const shadowDrainTimeout = 5 * time.Second

// shadowJob is a decision the active policy made, waiting for the
// shadow: everything its decision-log line needs, and what the shadow's
// evaluation needs besides the input.
type shadowJob struct {
	verdict  Verdict
	input    map[string]any
	revision string // the active policy's
	metrics  map[string]any
	span     trace.SpanContext
	server   string
	kind     Kind
	approved bool // a reconsideration: the approval is in the input
	await    bool // Request.AwaitAnswer
	// ran is whether the active policy was evaluated; a decision made
	// before it (validation, usage unread) is not evaluated again.
	ran bool
}

// shadowQueue hands decisions to the shadow's one worker, in order,
// never blocking the decision: offer fails when the queue is full or
// closed.
type shadowQueue struct {
	mu     sync.RWMutex
	closed bool // guarded by mu
	jobs   chan *shadowJob
	done   chan struct{} // closed when the worker has written its last line
	// ctx is the worker's: cancelled when draining runs out of time, so
	// the evaluations left end at once.
	ctx    context.Context
	cancel context.CancelFunc
	// drain is how long close lets the worker finish: shadowDrainTimeout.
	drain time.Duration
}

func newShadowQueue(size int) *shadowQueue {
	ctx, cancel := context.WithCancel(context.Background())
	return &shadowQueue{jobs: make(chan *shadowJob, size), done: make(chan struct{}), ctx: ctx, cancel: cancel, drain: shadowDrainTimeout}
}

// offer queues j unless the queue is full or closed.
func (q *shadowQueue) offer(j *shadowJob) bool {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return false
	}
	select {
	case q.jobs <- j:
		return true
	default:
		return false
	}
}

// close stops taking decisions and waits for the worker to finish those
// it holds, cancelling what is left after q.drain.
func (q *shadowQueue) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.jobs)
	}
	q.mu.Unlock()
	t := time.AfterFunc(q.drain, q.cancel)
	defer t.Stop()
	<-q.done
	q.cancel()
}

// startShadow loads cfg's shadow policy, if any, and starts its worker.
func (e *Engine) startShadow(ctx context.Context, cfg *PolicyConfig) {
	if e.shadow = startShadow(ctx, cfg, e.log); e.shadow == nil {
		return
	}
	go e.shadowWorker()
}

// shadowWorker evaluates queued decisions with the shadow policy and
// writes each one's log line with the shadow's result, until the queue
// is closed and empty.
func (e *Engine) shadowWorker() {
	q := e.shadow.queue
	defer close(q.done)
	for j := range q.jobs {
		if q.ctx.Err() != nil { // stopping, out of time
			e.shadowDropped(j.verdict, j.input, j.revision, j.metrics, j.span, "stopping")
			continue
		}
		e.shadowDecided(j, e.shadow.judge(q.ctx, j))
		// A decision waiting for the CPU goes before the next shadow
		// evaluation: on a busy core a decision then waits for one
		// evaluation at most, not for the scheduler's time slice.
		runtime.Gosched()
	}
}

// logDecision writes the decision as's log line: at once without a
// shadow; with one, once the shadow has judged the same input, on the
// shadow's worker, so the decision does not wait for it.
func (e *Engine) logDecision(ctx context.Context, as *assessment, s Request, a *Approval) {
	v := as.verdict
	revision, metrics, span := as.revisionOr(e.Revision()), as.timings.metrics(), trace.SpanContextFromContext(ctx)
	if e.shadow == nil {
		e.dlog.write(v, as.input, revision, metrics, span)
		return
	}
	j := &shadowJob{verdict: v, input: as.input, revision: revision, metrics: metrics, span: span,
		server: s.Server.Name, kind: s.kindOf(), approved: a != nil, await: s.AwaitAnswer, ran: as.revision != ""}
	if !e.shadow.queue.offer(j) {
		e.shadowDropped(v, as.input, revision, metrics, span, "queue-full")
	}
}

// shadowDropped writes the line of a decision the shadow does not see,
// and counts it.
func (e *Engine) shadowDropped(v Verdict, input map[string]any, revision string, metrics map[string]any, span trace.SpanContext, why string) {
	e.metrics.ShadowFailed(telemetry.ShadowDropped)
	e.dlog.writeWith(v, input, revision, metrics, span, droppedShadow(e.ShadowRevision(), why))
	e.shadow.dropped()
}

// shadowDecided records the shadow's result r for j: counted, and
// written into j's log line.
func (e *Engine) shadowDecided(j *shadowJob, r shadowResult) {
	e.metrics.ShadowDecided(telemetry.ShadowDecision{Server: j.server, Kind: string(j.kind), Stage: string(j.verdict.Stage),
		Active: j.verdict.Outcome.String(), Shadow: r.verdict.Outcome.String()})
	if err := r.verdict.Err; r.failed() {
		e.metrics.ShadowFailed(shadowFailureWord(err))
		e.shadow.eng.log.Debug("shadow policy failed", zap.String("decision_id", j.verdict.DecisionID), zap.String("error", e.dlog.errorText(err)))
	}
	e.dlog.writeWith(j.verdict, j.input, j.revision, j.metrics, j.span, e.dlog.shadowCustom(r))
	e.shadow.count(j.verdict.Outcome, r) // last: status counts what the log holds
}

// shadowFailureWord is the metric's word for the shadow's error.
func shadowFailureWord(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return telemetry.ShadowTimeout
	}
	return telemetry.ShadowError
}

// Close stops the shadow policy's worker, if any, once it has written
// the log line of every decision it holds (within shadowDrainTimeout;
// those it has not evaluated by then are logged as not evaluated). Call
// it after the last decision and before the decision log's sinks close.
func (e *Engine) Close() {
	if e.shadow != nil {
		e.shadow.queue.close()
	}
	if e.keeper != nil {
		e.keeper.close()
	}
}
