package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// Reason codes for what an operator supplied that the firewall cannot use.
const (
	reasonEditUnreadable = "edit-unreadable"
	reasonAnswerOff      = "operator-answer-off"
)

// settlement is the final verdict on one stage and what the operator
// supplied with an approval: their edit, in the canonical form the verdict
// judged and the relay forwards, or the completion they wrote.
type settlement struct {
	engine.Verdict
	edited []byte // request params (request stage) or completion (result stage)
	answer []byte // the operator's completion, request stage only
}

// stage is one stage of a request of kind k: what the engine judges and
// its verdict, then, once settled, the final verdict. It lives on the
// heap, so that a goroutine waiting for a review holds a pointer to it
// rather than copies of it in every frame of the wait.
type stage struct {
	src    *Source
	k      *Kind
	s      engine.Request
	result []byte         // the completion; nil at the request stage
	v      engine.Verdict // the engine's verdict, then the final one (see decide)
	// reviewID is the review an escalation went through; edited and answer
	// are what the operator supplied with an approval (see settlement).
	reviewID       string
	edited, answer []byte
	// hold is what the stage holds from before the engine runs until it
	// settles (see decide): at the result stage the bytes of the
	// completion, and a review slot once its review is opened
	// (reviewSlot). slotted says it took the slot.
	hold    *admit.Hold
	slotted bool
	// reviewed is how its review ended, in the review-outcome metric's
	// words (approved, rejected, expired, abandoned, error); see settle.
	reviewed string
}

// decide runs evaluate, which fills in t.s, t.v and, at the result stage,
// t.result, on a decision worker, then settles an escalation: it waits
// for the operator, then re-runs the engine with the approval (a deny
// still wins), on the operator's edit when they made one. Any other
// verdict is final as it is. The calling goroutine only waits: the work
// before and after the review runs on a worker, so that the stack a
// waiting goroutine keeps is the few small frames of the wait (with a
// thousand reviews pending, a thousand of them; BENCHMARKS.md, P4). An
// error from evaluate ends the stage before any decision.
//
// The stage holds what it takes (package admit) from before the engine
// runs until it settles. A review slot of its server is taken only as
// the engine opens the stage's review (reviewSlot, which evaluate gives
// the engine as engine.Request.ReviewSlot): a decision that opens none
// takes none, so answers a host gives together are not refused for
// slots no review holds. Lacking a slot, the review is not opened, the
// engine records the decision as an error, and the stage is refused
// with the limit's error.
func (p *Pipeline) decide(ctx context.Context, t *stage, evaluate func() error) error {
	hold, werr := p.admit.Acquire(t.src.Server.Name, t.src.HostKey, admit.Claim{})
	if werr != nil {
		return werr
	}
	defer hold.Release()
	t.hold = hold
	var err error
	p.workers.do(ctx, func() {
		if err = evaluate(); err == nil && t.v.Outcome == engine.OutcomeEscalate {
			p.log.Info("awaiting review", zap.String("review_id", t.v.ReviewID), zap.String("decision_id", t.v.DecisionID),
				zap.String("server", t.s.Server.Name), zap.String("stage", string(t.v.Stage)))
		}
	})
	if err != nil {
		return err
	}
	if werr, ok := errors.AsType[*jsonrpc.Error](t.v.Err); ok {
		return werr // reviewSlot's refusal, which the verdict failed on
	}
	if t.v.Outcome != engine.OutcomeEscalate {
		return nil
	}
	t.reviewID = t.v.ReviewID
	held, stage := time.Now(), string(t.v.Stage)
	release := t.src.hold(ctx)
	if p.awaitReview(ctx, t.v.ReviewID) {
		p.workers.do(ctx, func() { p.settle(ctx, t) })
	} else {
		p.settle(ctx, t) // Store.Wait may poll for minutes: not on a worker
	}
	release()
	p.metrics.ReviewSettled(t.s.Server.Name, stage, t.reviewed, time.Since(held))
	return nil
}

// reviewSlot takes one of the server's pending-review slots for t's
// review, held with the rest of t's hold until t settles. The engine asks
// for it as it opens the review (engine.Request.ReviewSlot), maybe more
// than once (a decision taken again on newer usage); it takes one slot
// however often asked. A refusal fails the verdict with it as its Err,
// and decide returns it from there: only the decision the engine kept
// refuses the stage, never an earlier one it took again on newer usage.
func (t *stage) reviewSlot() error {
	if t.slotted {
		return nil
	}
	if werr := t.hold.Grow(admit.Claim{Reviews: 1}); werr != nil {
		return werr
	}
	t.slotted = true
	return nil
}

// settle sets t's final verdict once awaitReview has returned: what
// Store.Wait makes of its review, re-decided after an approval.
func (p *Pipeline) settle(ctx context.Context, t *stage) {
	v := t.v
	var st settlement
	it, err := p.store.Wait(ctx, v.ReviewID)
	t.reviewed = reviewedAs(it.State, err)
	switch {
	case err != nil && ctx.Err() != nil && it.ID != "":
		st = p.ended(ctx, v, it)
	case err != nil:
		st = p.unsettled(v, "store-error", "review queue unavailable", err)
	case it.State == review.StateApproved:
		st = p.approved(ctx, t.src, t.k, t.s, t.result, v, it)
		if v.Stage == engine.StageRequest {
			// The result stage knows what the person approved: a review
			// reason with one of these codes is satisfied there.
			t.s.Approved = approvedCodes(v)
		}
	case it.State == review.StateRejected:
		st = settlement{Verdict: engine.Verdict{Outcome: engine.OutcomeBlocker, DecisionID: v.DecisionID, Stage: v.Stage,
			ReviewID: v.ReviewID, Reasons: []engine.Reason{{Code: refusal.ReasonRejected, Message: it.Note}}}}
	case it.State == review.StateExpired:
		st = p.unsettled(v, refusal.ReasonExpired, review.ExpiryMessage(p.eng.ReviewTimeout()), nil)
	default:
		st = p.unsettled(v, refusal.ReasonAbandon, "review abandoned", fmt.Errorf("review ended in state %s", it.State))
	}
	t.v, t.edited, t.answer = st.Verdict, st.edited, st.answer
}

// ended settles a review whose request ended while it waited (its
// upstream cancelled it or went away, its host left, the firewall is
// stopping): the store has abandoned it, unless a decision came first,
// and nobody can be answered. Not an error of the firewall's: logged as
// what happened.
func (p *Pipeline) ended(ctx context.Context, v engine.Verdict, it review.Item) settlement {
	if it.State == review.StateApproved {
		p.finish(ctx, it.ID, review.StateFailed, "the request ended before the approval could be delivered")
	}
	p.log.Info("review abandoned: its request ended", zap.String("review_id", it.ID), zap.String("state", string(it.State)))
	return settlement{Verdict: engine.Verdict{Outcome: engine.OutcomeError, DecisionID: v.DecisionID, Stage: v.Stage,
		ReviewID: v.ReviewID, Reasons: []engine.Reason{{Code: refusal.ReasonAbandon, Message: "review abandoned"}}}}
}

// approved re-decides an approved item, with the operator's edit in place
// of the original, and records whether it was delivered; the re-decision
// is authoritative, whatever the CLI saw.
func (p *Pipeline) approved(ctx context.Context, src *Source, k *Kind, s engine.Request, result []byte, v engine.Verdict, it review.Item) settlement {
	st, err := operatorSupplied(src, k, v.Stage, it)
	if err != nil {
		st.Verdict = p.unsettled(v, err.code, err.msg, err).Verdict
		p.finish(ctx, it.ID, review.StateFailed, err.msg)
		return st
	}
	switch {
	case st.edited != nil && v.Stage == engine.StageRequest:
		s.Params = st.edited
	case st.edited != nil:
		result = st.edited
	}
	a := engine.Approval{DecisionID: v.DecisionID, By: it.DecidedBy, At: it.DecidedAt, Edited: st.edited != nil}
	s.Validated = v.Validated // spares validating unedited bytes again
	st.Verdict = p.eng.Reconsider(ctx, s, result, a)
	if ctx.Err() != nil { // its request ended since the approval: it will not be delivered
		return p.ended(ctx, v, it)
	}
	state, note := review.StateDelivered, releaseNote(it)
	if st.Outcome != engine.OutcomePass {
		state, note = review.StateFailed, "re-decision after approval: "+st.Outcome.String()
	}
	if err := p.finish(ctx, it.ID, state, note); err != nil && state == review.StateDelivered {
		// Delivered only once the queue says so: the item may have been
		// failed meanwhile (another replica took this one's lease for
		// dead), or the record cannot be written; either way its trail
		// would not show this delivery.
		st.Verdict = p.unsettled(v, "store-error", "review queue unavailable", err).Verdict
	}
	return st
}

// supplyError is why the firewall cannot use what an operator supplied. Its
// message is fixed: a decoder's error would quote part of the edit, which
// is the upstream's prompt, into the log and the review's note.
type supplyError struct{ code, msg string }

func (e *supplyError) Error() string { return e.msg }

// editedPart names what an edit at stage replaces.
func editedPart(k *Kind, stage engine.Stage) string {
	switch {
	case stage == engine.StageRequest:
		return "request"
	case k.Name == engine.KindSampling:
		return "completion"
	}
	return "answer"
}

// operatorSupplied reads the edit or answer stored with an approval, in
// canonical form for kind k. An answer counts only for a kind an operator
// may answer (sampling), and only where this serve lets operators answer:
// the CLI may run with another config.
func operatorSupplied(src *Source, k *Kind, stage engine.Stage, it review.Item) (settlement, *supplyError) {
	var st settlement
	var err error
	if it.Edited != nil {
		if st.edited, err = k.canonical(stage, it.Edited); err != nil {
			return st, &supplyError{reasonEditUnreadable, "the operator's edit could not be read as the " + editedPart(k, stage)}
		}
	}
	if it.Answer != nil {
		if !src.OperatorAnswer || !k.operatorAnswers {
			return st, &supplyError{reasonAnswerOff, "operator answers are off for server " + src.Server.Name}
		}
		if st.answer, err = k.canonical(engine.StageResult, it.Answer); err != nil {
			return st, &supplyError{reasonEditUnreadable, "the operator's answer could not be read as a completion"}
		}
	}
	return st, nil
}

func releaseNote(it review.Item) string {
	switch {
	case it.Answer != nil:
		return "the operator's answer released to the result check"
	case it.Edited != nil:
		return "released as edited after approval"
	}
	return "released after approval"
}

// finish records what became of an approved item, even if the request was
// cancelled meanwhile. A failure is logged and returned.
func (p *Pipeline) finish(ctx context.Context, id string, state review.State, note string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := p.store.Finish(ctx, id, state, note)
	if err != nil {
		p.log.Error("record review finish", zap.String("review_id", id), zap.Error(err))
	}
	return err
}

// unsettled is a verdict for an escalation nobody decided, or whose
// decision the firewall could not act on.
func (p *Pipeline) unsettled(v engine.Verdict, code, msg string, err error) settlement {
	if err != nil {
		p.log.Error("review did not settle", zap.String("review_id", v.ReviewID), zap.Error(err))
	}
	return settlement{Verdict: engine.Verdict{Outcome: engine.OutcomeError, DecisionID: v.DecisionID, Stage: v.Stage,
		ReviewID: v.ReviewID, Reasons: []engine.Reason{{Code: code, Message: msg}}, Err: err}}
}

// reviewedAs is how a review ended, as the review-outcome metric counts
// it: the state Store.Wait returned, abandoned for an item left unsettled
// by a request that ended, error when the store could not say.
func reviewedAs(st review.State, err error) string {
	switch {
	case st == review.StateApproved || st == review.StateRejected || st == review.StateExpired || st == review.StateAbandoned:
		return string(st)
	case err != nil:
		return "error"
	}
	return "abandoned"
}
