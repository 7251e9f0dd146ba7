package engine

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/logship"
	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// Config is what the engine needs besides its collaborators.
type Config struct {
	Policy        PolicyConfig
	ReviewTimeout time.Duration   // how long an escalation waits for a person
	Limits        validate.Limits // zero value: validate.DefaultLimits()
	// DecisionLog receives one JSON line per decision; nil turns it off.
	DecisionLog io.Writer
	// DecisionLogService ships the same events off the machine; nil: no
	// service sink. The caller starts it and stops it after the engine's
	// last decision.
	DecisionLogService *logship.Shipper
	// IncludeContent logs the input as the policy saw it, and reasons and
	// errors as written. Default false: everything an upstream or a host
	// wrote is replaced by salted digests (see inputShapes).
	IncludeContent bool
	// LogSalt keys the digests that replace text in the decision log (see
	// LoadLogSalt). Default: a random salt per process, so digests then
	// correlate within one process only.
	LogSalt []byte
	// UsageWindows are named sliding windows input.usage reports besides
	// DefaultUsageWindows (minute and hour, always there). Default none.
	UsageWindows map[string]time.Duration
	// Metrics records each decision's outcome and step timings; nil
	// records nothing.
	Metrics *telemetry.Metrics
	// Shadow is a candidate policy evaluated beside Policy at every
	// decision, recorded and never enforced (shadow.go); nil: none. Close
	// stops it.
	Shadow *PolicyConfig
	// KeepInputs keeps each decision's policy input in the store for
	// `mcpx-fw policy replay` (replay.go), written in batches a fraction
	// of a second after the decision (keep.go). Default false: nothing is
	// kept.
	KeepInputs bool
}

// Engine turns requests of every kind, and their results, into Verdicts. It is safe for
// concurrent use.
type Engine struct {
	policy    atomic.Pointer[Policy]
	policyCfg PolicyConfig // what Watch reloads
	// policyState is what PolicyStatus reports.
	policyState *policyState
	// bundle is the bundle service the policy comes from, nil when it
	// comes from policyCfg.Dir; bundleETag is the ETag of the bundle
	// fetched at start-up and bundleErr the failure last logged (both
	// touched only at start-up and then by the one polling goroutine).
	bundle     *policybundle.Source
	bundleETag string
	bundleErr  string
	store      *review.Store
	log        *zap.Logger
	dlog       *decisionLog
	timeout    time.Duration
	limits     validate.Limits
	usageRead  *review.UsageReader // nil without a store
	metrics    *telemetry.Metrics  // nil: no metrics
	shadow     *shadow             // nil: no shadow policy (shadow.go)
	// cold is set on a shadow's engine: its policies are not warmed (see
	// warm), so a slow shadow holds up neither start-up nor a reload.
	cold bool

	// keeper writes the kept inputs (Config.KeepInputs, with a store to
	// keep them in); nil: none are kept.
	keeper *keeper

	// reloaded, when set (by tests), hears about every reload attempt.
	reloaded func(revision string, err error)
	// rulesOf gives the validation rules of a kind: the package's rulesOf,
	// or (in tests) a wrapper counting what is validated.
	rulesOf func(Kind) rules
}

// New loads and compiles the policy; an engine never starts without one.
func New(ctx context.Context, cfg Config, store *review.Store, log *zap.Logger) (*Engine, error) {
	windows, err := UsageWindows(cfg.UsageWindows)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		policyCfg: cfg.Policy,
		store:     store,
		log:       log.Named("engine"),
		dlog:      newDecisionLog(cfg.DecisionLog, cfg.DecisionLogService, cfg.IncludeContent, cfg.LogSalt, log.Named("engine")),
		timeout:   cfg.ReviewTimeout,
		limits:    cfg.Limits,
		rulesOf:   rulesOf,
		metrics:   cfg.Metrics,
	}
	if store != nil {
		if e.usageRead, err = store.UsageReader(ctx, windows); err != nil {
			return nil, err
		}
	}
	if err := e.startActive(ctx); err != nil {
		return nil, err
	}
	e.startShadow(ctx, cfg.Shadow)
	if cfg.KeepInputs && store != nil {
		e.keeper = newKeeper(store, e.log, keepQueueSize)
	}
	return e, nil
}

// startActive gives e the policy it decides with, from its bundle or its
// folder (or the embedded set).
func (e *Engine) startActive(ctx context.Context) error {
	if e.policyCfg.Bundle != nil {
		return e.startBundle(ctx)
	}
	p, err := LoadPolicy(ctx, e.policyCfg)
	if err != nil {
		return err
	}
	src := sourceOf(e.policyCfg)
	e.policyState = newPolicyState(src.kind(), src.name())
	e.activate(ctx, p)
	e.log.Info("policy loaded", zap.String("revision", p.Revision()), zap.String("source", src.kind()), zap.String("from", src.name()))
	return nil
}

// activate makes p the deciding policy, warmed first so the first request
// after the swap does not pay OPA's set-up. Requests in flight finish on
// the policy they started with.
func (e *Engine) activate(ctx context.Context, p *Policy) {
	e.warm(ctx, p)
	e.policy.Store(p)
	e.policyState.loaded(p.Revision(), time.Now())
}

// Revision identifies the policy files currently deciding.
func (e *Engine) Revision() string { return e.policy.Load().Revision() }

// ReviewTimeout is how long an escalation waits for an operator.
func (e *Engine) ReviewTimeout() time.Duration { return e.timeout }

// Decide judges a request before the host sees it. An
// escalation is queued for review before Decide returns.
func (e *Engine) Decide(ctx context.Context, s Request) Verdict {
	return e.decide(ctx, StageRequest, s, nil, nil)
}

// Screen checks the raw bytes of a request as the upstream sent
// them, before anything decodes them. Only violations are decided here: a
// request that breaks a rule is recorded as a blocker and Screen returns
// false; a clean one returns true and goes on to Decide once decoded.
func (e *Engine) Screen(ctx context.Context, s Request) (Verdict, bool) {
	req, violations := e.rulesOf(s.kindOf()).request(s.Params, e.options(s))
	if len(violations) == 0 {
		return Verdict{}, true
	}
	a := assessment{
		verdict: Verdict{Outcome: OutcomeBlocker, DecisionID: newDecisionID(), Stage: StageRequest, Violations: violations},
		input:   buildInput(StageRequest, s, req, nil, nil, nil),
		request: req,
	}
	e.commit(ctx, &a, s, nil, nil)
	return a.verdict, false
}

// Check judges the host's answer (a completion, a form's answer, a roots
// list) before the upstream sees it. The
// request is validated again unless s.Validated (the request stage's
// Verdict.Validated) was made from the same bytes.
func (e *Engine) Check(ctx context.Context, s Request, result []byte) Verdict {
	return e.decide(ctx, StageResult, s, result, nil)
}

// Reconsider judges an approved escalation again, with the approval in the
// input: the policy's review rules are satisfied, its deny rules still win,
// and the request (or result) is validated again in case it changed (the
// request not when s.Validated shows these bytes validated already).
// result is nil at the request stage.
func (e *Engine) Reconsider(ctx context.Context, s Request, result []byte, a Approval) Verdict {
	stage := StageRequest
	if result != nil {
		stage = StageResult
	}
	return e.decide(ctx, stage, s, result, &a)
}

// Preview decides as Decide (stage request) or Check (stage result) would,
// through the same code, but records nothing, queues nothing and writes no
// log: it is what `mcpx-fw policy eval` shows. usage replaces the store's
// reading when not nil. It returns the input document the policy saw.
func (e *Engine) Preview(ctx context.Context, stage Stage, s Request, result []byte, usage Usage) (Verdict, map[string]any) {
	a := e.assess(ctx, stage, s, result, nil, usage)
	return a.verdict, a.input
}

// decide is the one decision point: assess (validate, read usage, evaluate),
// then commit (queue, record, log). A decision that charges its server's
// usage, or changes its request's charge, does the same in decideCharged.
func (e *Engine) decide(ctx context.Context, stage Stage, s Request, result []byte, a *Approval) Verdict {
	if e.charged(stage, s, a) {
		return e.decideCharged(ctx, stage, s, result, a)
	}
	as := e.assess(ctx, stage, s, result, a, nil)
	e.commit(ctx, &as, s, result, a)
	return as.verdict
}

// charged reports whether the decision of s at stage may change its
// server's usage: a first decision that charges (charges), or the
// re-decision of an approved sampling request, which reserves it again.
func (e *Engine) charged(stage Stage, s Request, a *Approval) bool {
	switch {
	case e.usageRead == nil || !charges(s.kindOf(), stage):
		return false
	case a == nil:
		return true
	}
	return stage == StageRequest && s.kindOf() == KindSampling
}

// decideCharged decides a request or result that charges its server's
// usage: a first decision, or the re-decision of an approved sampling
// request, which reserves it again (charge). Reading the usage,
// evaluating the policy on it and committing the decision with its charge
// are one step for the server (review.UsageReader.ChargeFor): no other
// decision's charge, in this process or any other sharing the store, comes
// between the usage the policy saw and the charge this decision adds, so
// a budget is spent exactly. A re-decision sees the usage without its
// request's own reservation, as its first decision did. Validation comes
// first, outside that step; a request it blocks is committed as any other
// (its charge, one request, still waits for the server's turn inside the
// store).
func (e *Engine) decideCharged(ctx context.Context, stage Stage, s Request, result []byte, a *Approval) Verdict {
	as, clean := e.validation(stage, s, result, a)
	if !clean {
		e.commit(ctx, &as, s, result, a)
		return as.verdict
	}
	except := ""
	if a != nil {
		except = a.DecisionID
	}
	validated, start, evaluated := as, time.Now(), false
	opened, err := e.usageRead.ChargeFor(ctx, s.Server.Name, except, func(usage map[string]review.Usage) (review.Entry, error) {
		as, evaluated = validated, true // decided afresh if asked again with newer usage
		as.timings.usage = time.Since(start)
		e.evaluateOn(ctx, &as, s, a, usage, nil)
		return e.entry(&as, s, result, a), nil
	})
	if !evaluated {
		e.evaluateOn(ctx, &as, s, a, nil, err)
		e.commit(ctx, &as, s, result, a)
		return as.verdict
	}
	// The charge's step read usage and evaluated too: the rest is the commit.
	as.timings.commit = max(time.Since(start)-as.timings.usage-as.timings.eval, 0)
	e.recorded(ctx, &as, s, result, a, opened, err)
	return as.verdict
}

// options are the validation options for s.
func (e *Engine) options(s Request) validate.Options {
	return validate.Options{Era: s.Server.Era, Caps: s.Caps, Limits: e.limits}
}

// newVerdict starts a verdict that has not been decided yet: its zero
// outcome is an error, so a path that forgets to decide fails closed.
func newVerdict(stage Stage) Verdict {
	return Verdict{DecisionID: newDecisionID(), Stage: stage}
}

// failed makes v an error verdict with one reason.
func failed(v *Verdict, code, message string, err error) {
	v.Outcome, v.Err = OutcomeError, err
	v.Reasons = append(v.Reasons, Reason{Code: code, Message: message})
}
