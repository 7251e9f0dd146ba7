package relay

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
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

// settle turns an escalation into a final verdict: it waits for the
// operator, then re-runs the engine with the approval (a deny still wins),
// on the operator's edit when they made one. Any other verdict is returned
// as it is. result is nil at the request stage.
func (p *Proxy) settle(ctx context.Context, u *upstream, s engine.Sampling, result []byte, v engine.Verdict) settlement {
	if v.Outcome != engine.OutcomeEscalate {
		return settlement{Verdict: v}
	}
	p.log.Info("awaiting review", zap.String("review_id", v.ReviewID), zap.String("decision_id", v.DecisionID),
		zap.String("server", s.Server.Name), zap.String("stage", string(v.Stage)))
	it, err := p.awaitReview(ctx, v.ReviewID)
	if err != nil {
		return p.unsettled(v, "store-error", "review queue unavailable", err)
	}
	switch it.State {
	case review.StateApproved:
		return p.approved(ctx, u, s, result, v, it)
	case review.StateRejected:
		return settlement{Verdict: engine.Verdict{Outcome: engine.OutcomeBlocker, DecisionID: v.DecisionID, Stage: v.Stage,
			ReviewID: v.ReviewID, Reasons: []engine.Reason{{Code: reasonRejected, Message: it.Note}}}}
	case review.StateExpired:
		return p.unsettled(v, reasonExpired, fmt.Sprintf("expired after %s awaiting review", p.eng.ReviewTimeout()), nil)
	}
	return p.unsettled(v, reasonAbandon, "review abandoned", fmt.Errorf("review ended in state %s", it.State))
}

// approved re-decides an approved item, with the operator's edit in place
// of the original, and records whether it was delivered; the re-decision
// is authoritative, whatever the CLI saw.
func (p *Proxy) approved(ctx context.Context, u *upstream, s engine.Sampling, result []byte, v engine.Verdict, it review.Item) settlement {
	st, err := operatorSupplied(u, v.Stage, it)
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
	st.Verdict = p.eng.Reconsider(ctx, s, result, a)
	state, note := review.StateDelivered, releaseNote(it)
	if st.Outcome != engine.OutcomePass {
		state, note = review.StateFailed, "re-decision after approval: "+st.Outcome.String()
	}
	p.finish(ctx, it.ID, state, note)
	return st
}

// supplyError is why the firewall cannot use what an operator supplied.
type supplyError struct{ code, msg string }

func (e *supplyError) Error() string { return e.msg }

// operatorSupplied reads the edit or answer stored with an approval, in
// canonical form. An answer counts only where this serve lets operators
// answer: the CLI may run with another config.
func operatorSupplied(u *upstream, stage engine.Stage, it review.Item) (settlement, *supplyError) {
	var st settlement
	var err error
	if it.Edited != nil {
		if st.edited, err = canonical(stage, it.Edited); err != nil {
			return st, &supplyError{reasonEditUnreadable, "the operator's edit could not be read: " + err.Error()}
		}
	}
	if it.Answer != nil {
		if !u.cfg.OperatorAnswer {
			return st, &supplyError{reasonAnswerOff, "operator answers are off for server " + u.cfg.Name}
		}
		if st.answer, err = canonical(engine.StageResult, it.Answer); err != nil {
			return st, &supplyError{reasonEditUnreadable, "the operator's answer could not be read: " + err.Error()}
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
// cancelled meanwhile.
func (p *Proxy) finish(ctx context.Context, id string, state review.State, note string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := p.store.Finish(ctx, id, state, note); err != nil {
		p.log.Error("record review finish", zap.String("review_id", id), zap.Error(err))
	}
}

// unsettled is a verdict for an escalation nobody decided, or whose
// decision the firewall could not act on.
func (p *Proxy) unsettled(v engine.Verdict, code, msg string, err error) settlement {
	if err != nil {
		p.log.Error("review did not settle", zap.String("review_id", v.ReviewID), zap.Error(err))
	}
	return settlement{Verdict: engine.Verdict{Outcome: engine.OutcomeError, DecisionID: v.DecisionID, Stage: v.Stage,
		ReviewID: v.ReviewID, Reasons: []engine.Reason{{Code: code, Message: msg}}, Err: err}}
}
