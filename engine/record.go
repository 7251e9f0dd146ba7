package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// newDecisionID returns a printable, unguessable id ("dc-" + 16 hex) that
// travels into every log line, the wire error data and the review queue.
func newDecisionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "dc-" + hex.EncodeToString(b[:])
}

// record writes the decision to the store, the decision log and the
// service log. Recording failures are logged, never turned into a pass.
func (e *Engine) record(ctx context.Context, v Verdict, s Sampling, input map[string]any) {
	ctx = context.WithoutCancel(ctx) // a cancelled request is still recorded
	err := e.store.RecordDecision(ctx, review.Decision{
		ID:        v.DecisionID,
		Server:    s.Server.Name,
		Stage:     string(v.Stage),
		Outcome:   v.Outcome.String(),
		Reasons:   toReviewReasons(append(append([]Reason{}, v.Reasons...), violationReasons(v)...)),
		ReviewID:  v.ReviewID,
		CreatedAt: time.Now(),
	})
	if err != nil {
		e.log.Error("record decision", zap.String("decision_id", v.DecisionID), zap.Error(err))
	}
	e.dlog.write(v, input, e.Revision())
	e.logVerdict(v, s)
}

func violationReasons(v Verdict) []Reason {
	out := make([]Reason, len(v.Violations))
	for i, vi := range v.Violations {
		out[i] = Reason{Code: vi.Rule, Message: vi.Path + ": " + vi.Message}
	}
	return out
}

// logVerdict writes one service-log line per decision: ids, codes and the
// outcome, never prompt text.
func (e *Engine) logVerdict(v Verdict, s Sampling) {
	fields := []zap.Field{
		zap.String("decision_id", v.DecisionID),
		zap.String("server", s.Server.Name),
		zap.String("stage", string(v.Stage)),
		zap.Stringer("outcome", v.Outcome),
		zap.Strings("reason_codes", v.ReasonCodes()),
		zap.Int("params_bytes", len(s.Params)),
	}
	if v.ReviewID != "" {
		fields = append(fields, zap.String("review_id", v.ReviewID))
	}
	if v.Err != nil {
		fields = append(fields, zap.Error(v.Err))
		e.log.Error("decision", fields...)
		return
	}
	e.log.Info("decision", fields...)
}
