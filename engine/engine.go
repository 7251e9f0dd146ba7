package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// Config is what the engine needs besides its collaborators.
type Config struct {
	Policy        PolicyConfig
	ReviewTimeout time.Duration   // how long an escalation waits for a person
	Limits        validate.Limits // zero value: validate.DefaultLimits()
	// DecisionLog receives one JSON line per decision; nil turns it off.
	DecisionLog io.Writer
	// IncludeContent keeps prompt and completion text in the decision log
	// instead of salted digests.
	IncludeContent bool
}

// Engine turns sampling requests and results into Verdicts. It is safe for
// concurrent use.
type Engine struct {
	policy  atomic.Pointer[Policy]
	store   *review.Store
	log     *zap.Logger
	dlog    *decisionLog
	timeout time.Duration
	limits  validate.Limits
}

// New loads and compiles the policy; an engine never starts without one.
func New(ctx context.Context, cfg Config, store *review.Store, log *zap.Logger) (*Engine, error) {
	p, err := LoadPolicy(ctx, cfg.Policy)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		store:   store,
		log:     log.Named("engine"),
		dlog:    newDecisionLog(cfg.DecisionLog, cfg.IncludeContent),
		timeout: cfg.ReviewTimeout,
		limits:  cfg.Limits,
	}
	e.policy.Store(p)
	e.log.Info("policy loaded", zap.String("revision", p.Revision()), zap.String("dir", cfg.Policy.Dir))
	return e, nil
}

// Revision identifies the policy files currently deciding.
func (e *Engine) Revision() string { return e.policy.Load().Revision() }

// ReviewTimeout is how long an escalation waits for an operator.
func (e *Engine) ReviewTimeout() time.Duration { return e.timeout }

// Decide judges a sampling request before the host's model sees it. An
// escalation is queued for review before Decide returns.
func (e *Engine) Decide(ctx context.Context, s Sampling) Verdict {
	return e.judge(ctx, StageRequest, s, nil, nil)
}

// Screen checks the raw bytes of a sampling request as the upstream sent
// them, before anything decodes them. Only violations are decided here: a
// request that breaks a rule is recorded as a blocker and Screen returns
// false; a clean one returns true and goes on to Decide once decoded.
func (e *Engine) Screen(ctx context.Context, s Sampling) (Verdict, bool) {
	req, violations := validate.Request(s.Params, validate.Options{Era: s.Server.Protocol, Caps: s.Caps, Limits: e.limits})
	if len(violations) == 0 {
		return Verdict{}, true
	}
	v := Verdict{Outcome: OutcomeBlocker, DecisionID: newDecisionID(), Stage: StageRequest, Violations: violations}
	e.record(ctx, v, s, buildInput(StageRequest, s, req, nil, nil))
	return v, false
}

// Check judges the host's completion before the upstream sees it.
func (e *Engine) Check(ctx context.Context, s Sampling, result []byte) Verdict {
	return e.judge(ctx, StageResult, s, result, nil)
}

// Reconsider judges an approved escalation again, with the approval in the
// input: the policy's review rules are satisfied, its deny rules still win,
// and the request (or result) is validated again in case it changed.
// result is nil at the request stage.
func (e *Engine) Reconsider(ctx context.Context, s Sampling, result []byte, a Approval) Verdict {
	stage := StageRequest
	if result != nil {
		stage = StageResult
	}
	return e.judge(ctx, stage, s, result, &a)
}

// judge is the one check point: validate, decide, queue, record.
func (e *Engine) judge(ctx context.Context, stage Stage, s Sampling, result []byte, a *Approval) Verdict {
	v := Verdict{DecisionID: newDecisionID(), Stage: stage}
	input, violations := e.validated(stage, s, result, a)
	switch {
	case len(violations) > 0:
		v.Outcome, v.Violations = OutcomeBlocker, violations
	default:
		e.evaluate(ctx, &v, input, a != nil)
	}
	if v.Outcome == OutcomeEscalate {
		e.enqueue(ctx, &v, s, result)
	}
	e.record(ctx, v, s, input)
	return v
}

// validated runs structural validation for the stage and, when it passes,
// builds the policy input.
func (e *Engine) validated(stage Stage, s Sampling, result []byte, a *Approval) (map[string]any, []validate.Violation) {
	opts := validate.Options{Era: s.Server.Protocol, Caps: s.Caps, Limits: e.limits}
	req, violations := validate.Request(s.Params, opts)
	if len(violations) > 0 {
		return buildInput(stage, s, req, nil, a), violations
	}
	var res validate.Document
	if stage == StageResult {
		res, violations = validate.Result(result, req, opts)
	}
	return buildInput(stage, s, req, res, a), violations
}

// evaluate runs the policy and fills the verdict. An approved escalation
// that the policy still wants reviewed is an error: nobody can approve twice.
func (e *Engine) evaluate(ctx context.Context, v *Verdict, input map[string]any, approved bool) {
	d, err := e.policy.Load().Evaluate(ctx, input)
	if err != nil {
		v.Outcome, v.Err = OutcomeError, fmt.Errorf("policy evaluation failed: %w", err)
		v.Reasons = []Reason{{Code: "policy-error", Message: "policy evaluation failed"}}
		return
	}
	v.Outcome = d.Outcome
	switch d.Outcome {
	case OutcomeBlocker:
		v.Reasons = d.Deny
	case OutcomeEscalate:
		v.Reasons = d.Review
	}
	if approved && v.Outcome == OutcomeEscalate {
		v.Outcome, v.Err = OutcomeError, fmt.Errorf("policy asked for review of an approved item")
		v.Reasons = append(v.Reasons, Reason{Code: "review-after-approval", Message: "policy asked for review again after approval"})
	}
}

// enqueue opens the review item for an escalation. If the store fails the
// verdict becomes an error: an escalation nobody can see must not wait.
func (e *Engine) enqueue(ctx context.Context, v *Verdict, s Sampling, result []byte) {
	meta, err := json.Marshal(s)
	if err != nil {
		v.Outcome, v.Err = OutcomeError, fmt.Errorf("encode review context: %w", err)
		return
	}
	it, err := e.store.Add(ctx, review.Item{
		DecisionID: v.DecisionID,
		Server:     s.Server.Name,
		Label:      s.Server.Label,
		Stage:      string(v.Stage),
		Era:        s.Server.Protocol,
		Reasons:    toReviewReasons(v.Reasons),
		Request:    json.RawMessage(s.Params),
		Result:     json.RawMessage(result),
		Context:    meta,
	}, e.timeout)
	if err != nil {
		v.Outcome, v.Err = OutcomeError, fmt.Errorf("open review: %w", err)
		v.Reasons = append(v.Reasons, Reason{Code: "store-error", Message: "review queue unavailable"})
		return
	}
	v.ReviewID = it.ID
}

func toReviewReasons(rs []Reason) []review.Reason {
	out := make([]review.Reason, len(rs))
	for i, r := range rs {
		out[i] = review.Reason{Code: r.Code, Message: r.Message}
	}
	return out
}
