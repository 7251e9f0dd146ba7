package relay

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// settle turns an escalation into a final verdict: it waits for the
// operator, then re-runs the engine with the approval (a deny still wins).
// Any other verdict is returned as it is. result is nil at the request
// stage.
func (p *Proxy) settle(ctx context.Context, s engine.Sampling, result []byte, v engine.Verdict) engine.Verdict {
	if v.Outcome != engine.OutcomeEscalate {
		return v
	}
	p.log.Info("awaiting review", zap.String("review_id", v.ReviewID), zap.String("decision_id", v.DecisionID),
		zap.String("server", s.Server.Name), zap.String("stage", string(v.Stage)))
	it, err := p.store.Wait(ctx, v.ReviewID)
	if err != nil {
		return p.unsettled(v, "store-error", "review queue unavailable", err)
	}
	switch it.State {
	case review.StateApproved:
		return p.approved(ctx, s, result, v, it)
	case review.StateRejected:
		return engine.Verdict{Outcome: engine.OutcomeBlocker, DecisionID: v.DecisionID, Stage: v.Stage,
			Reasons: []engine.Reason{{Code: reasonRejected, Message: it.Note}}}
	case review.StateExpired:
		return p.unsettled(v, reasonExpired, fmt.Sprintf("expired after %s awaiting review", p.eng.ReviewTimeout()), nil)
	}
	return p.unsettled(v, reasonAbandon, "review abandoned", fmt.Errorf("review ended in state %s", it.State))
}

// approved re-decides an approved item and records whether it was
// delivered; the re-decision is authoritative, whatever the CLI saw.
func (p *Proxy) approved(ctx context.Context, s engine.Sampling, result []byte, v engine.Verdict, it review.Item) engine.Verdict {
	again := p.eng.Reconsider(ctx, s, result, engine.Approval{DecisionID: v.DecisionID, By: it.DecidedBy, At: it.DecidedAt})
	state, note := review.StateDelivered, "released after approval"
	if again.Outcome != engine.OutcomePass {
		state, note = review.StateFailed, "re-decision after approval: "+again.Outcome.String()
	}
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := p.store.Finish(finishCtx, it.ID, state, note); err != nil {
		p.log.Error("record review finish", zap.String("review_id", it.ID), zap.Error(err))
	}
	return again
}

// unsettled is a verdict for an escalation nobody decided.
func (p *Proxy) unsettled(v engine.Verdict, code, msg string, err error) engine.Verdict {
	if err != nil {
		p.log.Error("review did not settle", zap.String("review_id", v.ReviewID), zap.Error(err))
	}
	return engine.Verdict{Outcome: engine.OutcomeError, DecisionID: v.DecisionID, Stage: v.Stage,
		ReviewID: v.ReviewID, Reasons: []engine.Reason{{Code: code, Message: msg}}, Err: err}
}
