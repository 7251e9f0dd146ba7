package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"go.uber.org/zap"
)

// DefaultShadowTimeout bounds one evaluation of a shadow policy when its
// PolicyConfig.Timeout is zero: the active policy's default (250ms as
// serve configures it). A shadow runs beside traffic on one worker, so a
// shadow that needs longer would mostly fill its queue; its decisions are
// then dropped and counted, never waited for.
const DefaultShadowTimeout = 250 * time.Millisecond

// shadow is a candidate policy evaluated beside the active one, on the
// very input the active policy saw, after the decision is made: its
// outcome goes into the decision's log event, the metrics and status,
// and nowhere else. It never changes a verdict, opens a review, charges
// usage or writes to the store. Its policy lives in an Engine of its own
// that holds no store and no log (eng), so loading, hot reload and
// bundles are the active policy's code; its policy is nil until one
// compiles.
type shadow struct {
	eng   *Engine
	queue *shadowQueue
	mu    sync.Mutex
	tally ShadowTally // guarded by mu
}

// ShadowStatus is what the engine knows of its shadow policy: its load
// status as the active policy's, and how its outcomes compared.
type ShadowStatus struct {
	PolicyStatus
	ShadowTally
}

// ShadowTally counts the shadow's evaluations since start-up.
type ShadowTally struct {
	// Compared counts decisions by active outcome and shadow outcome
	// (the Outcome words); a pair that differs is a disagreement.
	Compared map[[2]string]int64
	Errors   int64 // evaluations that failed (timeouts included)
	Timeouts int64 // evaluations that ran out of time
	// Dropped counts decisions the shadow did not see: its queue was
	// full, or serve was stopping.
	Dropped int64
}

// startShadow loads the shadow policy cfg names, if any. Unlike the
// active policy, a shadow that does not load stops nothing: it is logged
// and reported as failed, the active policy decides, and hot reload or
// the bundle's polling may load it later.
func startShadow(ctx context.Context, cfg *PolicyConfig, log *zap.Logger) *shadow {
	if cfg == nil {
		return nil
	}
	c := *cfg
	if c.Timeout == 0 {
		c.Timeout = DefaultShadowTimeout
	}
	eng := &Engine{policyCfg: c, log: log.Named("shadow"), rulesOf: rulesOf, cold: true}
	err := eng.startActive(ctx) // as the active policy's start: its bundle or folder
	if eng.policyState == nil { // it failed before naming its source
		eng.policyState = shadowState(c)
	}
	if err != nil {
		eng.policyState.failed(shadowFailure(c, err), err, time.Now())
		eng.log.Error("shadow policy did not load; it is reported as failed and the active policy decides alone", zap.Error(err))
	}
	sh := &shadow{eng: eng, tally: ShadowTally{Compared: map[[2]string]int64{}}}
	sh.queue = newShadowQueue(shadowQueueSize)
	return sh
}

// shadowState is the PolicyStatus of a shadow that failed before
// startActive named its source: its folder, or a bundle whose config was
// refused (unnamed: its URL may carry credentials).
func shadowState(cfg PolicyConfig) *policyState {
	if cfg.Bundle != nil {
		return newPolicyState(SourceBundle, "")
	}
	src := sourceOf(cfg)
	return newPolicyState(src.kind(), src.name())
}

// shadowFailure is the Reload* word a failed first load is counted under.
func shadowFailure(cfg PolicyConfig, err error) string {
	if _, ok := errors.AsType[ast.Errors](err); ok || cfg.Bundle == nil {
		return ReloadCompileError
	}
	return ReloadDownloadError
}

// shadowResult is one evaluation of the shadow policy.
type shadowResult struct {
	revision string
	verdict  Verdict
	eval     time.Duration
	// skipped is why the shadow did not run, "" when it did: the
	// decision was made before the policy runs (see shadowJob.ran).
	skipped string
}

// judge evaluates the shadow on j's input as the active policy was
// evaluated on it (evaluate, then awaitAnswer), on a verdict of its own.
func (sh *shadow) judge(ctx context.Context, j *shadowJob) shadowResult {
	p := sh.eng.policy.Load()
	r := shadowResult{revision: p.Revision(), verdict: Verdict{Stage: j.verdict.Stage}}
	switch {
	case !j.ran:
		return sh.skipped(j)
	case p == nil:
		failed(&r.verdict, "shadow-not-loaded", "the shadow policy has not loaded", errShadowNotLoaded)
		return r
	}
	as := assessment{verdict: r.verdict, input: j.input}
	sh.eng.evaluate(ctx, &as, j.approved)
	awaitAnswer(&as.verdict, Request{AwaitAnswer: j.await}, j.approved)
	r.revision, r.verdict, r.eval = as.revision, as.verdict, as.timings.eval
	return r
}

// failed reports whether the shadow's own evaluation failed (not the
// active decision's error a skipped result carries).
func (r shadowResult) failed() bool { return r.skipped == "" && r.verdict.Err != nil }

// errShadowNotLoaded is the shadow's error while no revision of it has
// compiled.
var errShadowNotLoaded = errors.New("shadow policy not loaded")

// skipped is the shadow's result for a decision made before any policy
// runs (a validation blocker, or usage the store could not read): no
// policy could have decided it otherwise, so the shadow reports the
// active outcome, marked as not evaluated.
func (sh *shadow) skipped(j *shadowJob) shadowResult {
	r := shadowResult{revision: sh.eng.policy.Load().Revision(), verdict: j.verdict, skipped: "policy-not-run"}
	if len(j.verdict.Violations) > 0 {
		r.skipped = "validation"
	}
	return r
}

// count adds one comparison to the tally.
func (sh *shadow) count(active Outcome, r shadowResult) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.tally.Compared[[2]string{active.String(), r.verdict.Outcome.String()}]++
	if r.failed() {
		sh.tally.Errors++
		if errors.Is(r.verdict.Err, context.DeadlineExceeded) {
			sh.tally.Timeouts++
		}
	}
}

// dropped counts a decision the shadow did not see (after its line is
// written, as count).
func (sh *shadow) dropped() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.tally.Dropped++
}

// status is a copy the caller may keep.
func (sh *shadow) status() ShadowStatus {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	t := sh.tally
	t.Compared = make(map[[2]string]int64, len(sh.tally.Compared))
	for k, v := range sh.tally.Compared {
		t.Compared[k] = v
	}
	return ShadowStatus{PolicyStatus: sh.eng.policyState.status(), ShadowTally: t}
}

// ShadowStatus reports the shadow policy's revision, load status and
// tally; ok is false when no shadow is configured.
func (e *Engine) ShadowStatus() (st ShadowStatus, ok bool) {
	if e.shadow == nil {
		return ShadowStatus{}, false
	}
	return e.shadow.status(), true
}

// ShadowRevision is the shadow policy's revision, "" when none is
// configured or none has loaded.
func (e *Engine) ShadowRevision() string {
	if e.shadow == nil {
		return ""
	}
	return e.shadow.eng.policy.Load().Revision()
}
