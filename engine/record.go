package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// newDecisionID returns a printable, unguessable id ("dc-" + 16 hex) that
// travels into every log line, the wire error data and the review queue.
func newDecisionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "dc-" + hex.EncodeToString(b[:])
}

// commit writes a decision: its review item when it escalates, the
// decision row and its usage in one store transaction; then the decision
// log and the service log. An escalation the store cannot queue becomes an
// error (an item nobody can see must not wait), and that error is recorded
// in its place. Other recording failures are logged, never turned into a
// pass. a is the approval of a reconsideration, nil for a first decision
// (see charge).
func (e *Engine) commit(ctx context.Context, as *assessment, s Request, result []byte, a *Approval) {
	start := time.Now()
	opened, err := e.store.Commit(ctx, e.entry(as, s, result, a))
	as.timings.commit = time.Since(start)
	e.recorded(ctx, as, s, result, a, opened, err)
}

// recorded follows the store's answer to a decision's first write: the
// review it opened, or the error that replaces the decision (see commit).
func (e *Engine) recorded(ctx context.Context, as *assessment, s Request, result []byte, a *Approval, opened review.Item, err error) {
	v := &as.verdict
	switch {
	case err != nil && v.Outcome == OutcomeEscalate:
		failed(v, "store-error", "review queue unavailable", fmt.Errorf("open review: %w", err))
		_, err = e.store.Commit(ctx, e.entry(as, s, result, a))
	case err != nil && v.Outcome == OutcomePass:
		// A pass nobody can find later, whose usage no budget counts, is
		// not a pass: fail closed, and try to record that instead.
		failed(v, "store-error", "review queue unavailable", fmt.Errorf("record decision: %w", err))
		_, err = e.store.Commit(ctx, e.entry(as, s, result, a))
	case err == nil:
		v.ReviewID = opened.ID
	}
	if err != nil {
		e.log.Error("record decision", zap.String("decision_id", v.DecisionID), zap.Error(err))
	} else {
		e.keep(as.kept)
	}
	e.logDecision(ctx, as, s, a)
	e.logVerdict(*v, s, as.input)
	e.metrics.Decided(telemetry.Decision{Server: s.Server.Name, Kind: string(s.kindOf()), Stage: string(v.Stage), Outcome: v.Outcome.String(),
		Validate: as.timings.validate, Eval: as.timings.eval, Commit: as.timings.commit})
}

// entry is what the store keeps for a decision, its charge included. An
// escalation whose review context cannot be encoded, or that gets no place
// (Request.ReviewSlot), fails closed here, before anything is written.
func (e *Engine) entry(as *assessment, s Request, result []byte, a *Approval) review.Entry {
	v := &as.verdict
	as.kept = e.keptInput(as, s) // before opening: what the policy reached
	var item *review.Item
	if v.Outcome == OutcomeEscalate {
		item = opening(v, s, result)
	}
	v.Reservation = reservationOf(*v, s, a)
	usage, settles := charge(as, s, result, a)
	row := decisionRow(*v, s)
	if as.kept != nil {
		as.kept.CreatedAt = row.CreatedAt
	}
	return review.Entry{
		Decision:      row,
		Usage:         usage,
		Review:        item,
		ReviewTimeout: e.timeout,
		Settles:       settles,
	}
}

// opening is the review escalation v opens, or nil when it opens none
// and v has failed.
func opening(v *Verdict, s Request, result []byte) *review.Item {
	if s.ReviewSlot != nil {
		if err := s.ReviewSlot(); err != nil {
			failed(v, "review-refused", "no review could be opened", slotRefusal{err})
			return nil
		}
	}
	it, err := reviewItem(*v, s, result)
	if err != nil {
		failed(v, "store-error", "review queue unavailable", fmt.Errorf("encode review context: %w", err))
		return nil
	}
	return &it
}

// slotRefusal is Request.ReviewSlot's refusal: the upstream has reached a
// limit on what it may hold (the relay counts and logs it as such), so the
// decision fails closed without anything having gone wrong in the firewall.
type slotRefusal struct{ err error }

func (r slotRefusal) Error() string { return "open review: " + r.err.Error() }
func (r slotRefusal) Unwrap() error { return r.err }

// reviewItem is the queue item for an escalation; Context keeps what the
// firewall needs to decide it again after approval.
func reviewItem(v Verdict, s Request, result []byte) (review.Item, error) {
	meta, err := json.Marshal(s)
	if err != nil {
		return review.Item{}, err
	}
	return review.Item{
		Server:  s.Server.Name,
		Label:   s.Server.Label,
		Stage:   string(v.Stage),
		Era:     s.Server.Era,
		Reasons: toReviewReasons(v.Reasons),
		Waived:  toReviewReasons(v.Waived),
		Request: storedParams(s.Params),
		Result:  json.RawMessage(result),
		Context: meta,
	}, nil
}

// storedParams is the request as the queue keeps it: params as given, and
// {} for none (a roots/list without params, which the spec allows), as
// validation reads them, so the item is a document and can be queued.
func storedParams(params []byte) json.RawMessage {
	if len(params) == 0 || string(params) == "null" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(params)
}

// decisionRow is the store's record of v; violations are listed as reasons
// so the CLI can say why a blocker was blocked.
func decisionRow(v Verdict, s Request) review.Decision {
	return review.Decision{
		ID:        v.DecisionID,
		Server:    s.Server.Name,
		Stage:     string(v.Stage),
		Outcome:   v.Outcome.String(),
		Reasons:   toReviewReasons(append(append([]Reason{}, v.Reasons...), violationReasons(v)...)),
		CreatedAt: time.Now(),
	}
}

func toReviewReasons(rs []Reason) []review.Reason {
	out := make([]review.Reason, len(rs))
	for i, r := range rs {
		out[i] = review.Reason{Code: r.Code, Message: r.Message}
	}
	return out
}

func violationReasons(v Verdict) []Reason {
	out := make([]Reason, len(v.Violations))
	for i, vi := range v.Violations {
		out[i] = Reason{Code: vi.Rule, Message: vi.Path + ": " + vi.Message}
	}
	return out
}

// logVerdict writes one service-log line per decision: ids, codes and the
// outcome, never prompt text; an error's quoted part is digested, and so
// is a violation's path unless it names a place (a form's field among
// them), as in the masked decision log.
func (e *Engine) logVerdict(v Verdict, s Request, input map[string]any) {
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
	if len(v.Violations) > 0 {
		fields = append(fields, zap.Strings("violations", e.dlog.violationPlaces(v.Violations, input)))
	}
	if v.Err != nil {
		fields = append(fields, zap.String("error", e.dlog.errorText(v.Err)))
		if errors.As(v.Err, new(slotRefusal)) {
			e.log.Warn("decision", fields...) // a limit an upstream reached, not a fault
			return
		}
		e.log.Error("decision", fields...)
		return
	}
	e.log.Info("decision", fields...)
}

// revisionOr is the revision that evaluated as, or current when nothing
// evaluated (a request validation blocked).
func (as *assessment) revisionOr(current string) string {
	if as.revision != "" {
		return as.revision
	}
	return current
}
