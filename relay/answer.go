package relay

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// reasonAwaitAnswer marks the review a request waits in for an operator's
// answer because no host can sample.
const reasonAwaitAnswer = "operator-answer"

// awaitAnswer holds a request the policy let through for an operator to
// answer (servers.<name>.operator_answer), because no host can: it opens a
// review under the same decision, which `mcpx-fw review answer` settles.
// The engine queues only escalations, so the relay opens this one itself.
func (p *Proxy) awaitAnswer(ctx context.Context, s engine.Request, v engine.Verdict) engine.Verdict {
	reason := engine.Reason{Code: reasonAwaitAnswer, Message: "the host cannot sample; an operator writes the completion"}
	v.Outcome, v.Reasons = engine.OutcomeEscalate, []engine.Reason{reason}
	meta, err := json.Marshal(s)
	if err == nil {
		var it review.Item
		it, err = p.store.Add(ctx, review.Item{
			DecisionID: v.DecisionID, Server: s.Server.Name, Label: s.Server.Label,
			Stage: review.StageRequest, Era: s.Server.Protocol,
			Reasons: []review.Reason{{Code: reason.Code, Message: reason.Message}},
			Request: s.Params, Context: meta,
		}, p.eng.ReviewTimeout())
		v.ReviewID = it.ID
	}
	if err != nil {
		return p.unsettled(v, "store-error", "review queue unavailable", fmt.Errorf("open answer review: %w", err)).Verdict
	}
	return v
}
