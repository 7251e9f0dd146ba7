package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// assessment is one decision before anything is written: the verdict, the
// exact input the policy saw, the validated documents (for usage) and how
// long each step took (for the decision log's metrics).
type assessment struct {
	verdict Verdict
	input   map[string]any
	request validate.Document
	result  validate.Document
	timings timings
	// revision is the policy revision that evaluated, "" before
	// evaluation: a reload between evaluation and the log line must not
	// name the wrong policy.
	revision string
	// kept is the input kept for replay of the decision's latest entry
	// (keptInput), handed to the keeper once the decision is stored.
	kept *review.KeptInput
}

// assess validates, reads usage and evaluates the policy, with no side
// effects. Decide, Check, Reconsider and Preview all come through here, so
// `policy eval` cannot drift from what serve decides; a decision that
// charges usage reads it through decideCharged, which runs the same steps.
func (e *Engine) assess(ctx context.Context, stage Stage, s Request, result []byte, a *Approval, usage Usage) assessment {
	as, clean := e.validation(stage, s, result, a)
	if !clean {
		return as
	}
	usage, err := e.usage(ctx, s.Server.Name, usage, &as.timings)
	e.evaluateOn(ctx, &as, s, a, usage, err)
	return as
}

// validation starts the assessment of s with structural validation: a
// request or result that breaks a rule is decided here, a blocker, and
// clean is false.
func (e *Engine) validation(stage Stage, s Request, result []byte, a *Approval) (as assessment, clean bool) {
	start := time.Now()
	as = assessment{verdict: newVerdict(stage)}
	var violations []validate.Violation
	as.request, as.result, violations = e.validated(stage, s, result, &as.verdict)
	as.timings.validate = time.Since(start)
	if len(violations) > 0 {
		as.verdict.Outcome, as.verdict.Violations = OutcomeBlocker, violations
		as.input = buildInput(stage, s, as.request, as.result, a, nil)
		return as, false
	}
	return as, true
}

// evaluateOn finishes a clean assessment on the server's usage, or on the
// error that kept it from being read.
func (e *Engine) evaluateOn(ctx context.Context, as *assessment, s Request, a *Approval, usage Usage, err error) {
	as.input = buildInput(as.verdict.Stage, s, as.request, as.result, a, usage)
	if err != nil {
		failed(&as.verdict, "store-error", "usage unavailable", fmt.Errorf("read usage: %w", err))
		return
	}
	e.evaluate(ctx, as, a != nil)
	awaitAnswer(&as.verdict, s, a != nil)
}

// ReasonAwaitAnswer is the reason of the review a request waits in for an
// operator's answer (Request.AwaitAnswer).
const ReasonAwaitAnswer = "operator-answer"

// awaitAnswer turns the pass of a fresh request-stage decision on a
// request marked AwaitAnswer into an escalation: its review is where an
// operator writes the answer (`mcpx-fw review answer`). Its one reason
// replaces the policy's, so approving it approves nothing else.
func awaitAnswer(v *Verdict, s Request, approved bool) {
	if !s.AwaitAnswer || approved || v.Stage != StageRequest || v.Outcome != OutcomePass {
		return
	}
	v.Outcome = OutcomeEscalate
	v.Reasons = []Reason{{Code: ReasonAwaitAnswer, Message: "the host cannot sample; an operator writes the completion"}}
}

// validated runs structural validation for the stage, each document by
// the rules of the request's kind: the request, unless s carries its
// validation of these very bytes (s.Validated), and the result at the
// result stage. A clean request's validation goes into v.Validated, for
// the next stage.
func (e *Engine) validated(stage Stage, s Request, result []byte, v *Verdict) (req, res validate.Document, violations []validate.Violation) {
	opts := e.options(s)
	rules := e.rulesOf(s.kindOf())
	req, ok := s.Validated.document(s, opts)
	switch {
	case ok:
		v.Validated = s.Validated
	default:
		if req, violations = rules.request(s.Params, opts); len(violations) > 0 {
			return req, nil, violations
		}
		v.Validated = newValidated(s, opts, req)
	}
	if stage != StageResult {
		return req, nil, nil
	}
	res, violations = rules.result(result, req, opts)
	return req, res, violations
}

// rules are the validation rules of one kind of request.
type rules struct {
	request func([]byte, validate.Options) (validate.Document, []validate.Violation)
	result  func([]byte, validate.Document, validate.Options) (validate.Document, []validate.Violation)
}

func rulesOf(k Kind) rules {
	switch k {
	case KindElicitation:
		return rules{validate.Elicitation, validate.ElicitationResult}
	case KindRoots:
		return rules{validate.Roots, validate.RootsResult}
	}
	return rules{validate.Request, validate.Result}
}

// usage returns the server's usage in the configured windows: given, or
// read from the store now. The policy cannot judge a budget it cannot see,
// so a failed read fails the decision closed.
func (e *Engine) usage(ctx context.Context, server string, given Usage, t *timings) (Usage, error) {
	if given != nil {
		return given, nil
	}
	if e.usageRead == nil {
		return nil, errors.New("no store")
	}
	start := time.Now()
	u, err := e.usageRead.Read(ctx, server, time.Now())
	t.usage = time.Since(start)
	return u, err
}

// evaluate runs the policy and fills the verdict. An approved escalation
// that the policy still wants reviewed is an error: nobody can approve twice.
func (e *Engine) evaluate(ctx context.Context, as *assessment, approved bool) {
	v := &as.verdict
	p := e.policy.Load()
	as.revision = p.Revision()
	d, err := p.evaluate(ctx, as.input, &as.timings)
	decided(v, d, err, approved)
}

// decided fills v from the policy's decision d, or the error that kept it
// from deciding; approved says the input carried an approval. Serve's
// decisions and replay's (Redecide) come through here.
func decided(v *Verdict, d PolicyDecision, err error, approved bool) {
	if err != nil {
		failed(v, "policy-error", "policy evaluation failed", fmt.Errorf("policy evaluation failed: %w", err))
		return
	}
	v.Outcome = d.Outcome
	v.Waived = d.Waived
	switch d.Outcome {
	case OutcomeBlocker:
		v.Reasons = d.Deny
	case OutcomeEscalate:
		v.Reasons = d.Review
	}
	if approved && v.Outcome == OutcomeEscalate {
		failed(v, "review-after-approval", "policy asked for review again after approval",
			errors.New("policy asked for review of an approved item"))
	}
}
