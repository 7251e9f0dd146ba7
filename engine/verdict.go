package engine

import (
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// Stage says which review point a verdict belongs to: before the host's
// model is asked (request) or before its completion is returned (result).
type Stage string

const (
	StageRequest Stage = "request"
	StageResult  Stage = "result"
)

// Reason is one rule that contributed to a decision. Code is stable and may
// go on the wire; Message is for people and stays in logs and the CLI.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Verdict is the whole answer of the engine for one sampling request or
// result. Decide returns a Verdict and never a separate error: an error is
// an outcome (OutcomeError, with Err set).
type Verdict struct {
	Outcome    Outcome              `json:"outcome"`
	DecisionID string               `json:"decision_id"`
	Stage      Stage                `json:"stage"`
	Reasons    []Reason             `json:"reasons"`
	Violations []validate.Violation `json:"violations"`
	// Waived are the baseline reasons the server's package waived by name
	// for this item; they decided nothing.
	Waived []Reason `json:"waived,omitempty"`
	// ReviewID names the queued review item when Outcome is OutcomeEscalate.
	ReviewID string `json:"review_id,omitempty"`
	// Err explains an OutcomeError. It is for logs; it never goes on the wire.
	Err error `json:"-"`
	// Validated is the request's clean validation, nil when the request
	// broke a rule (or was not validated): set it as the Request's
	// Validated for the next stage of the same request.
	Validated *Validated `json:"-"`
	// Reservation is the decision whose charge stands for a sampling
	// request that may reach the model, at the request stage: set it as
	// the Request's Reservation for the result stage, whose completion
	// settles it.
	Reservation string `json:"-"`
}

// ReasonCodes lists the codes of the reasons and violations, the only part of
// a verdict's explanation that may be shown to the upstream.
func (v Verdict) ReasonCodes() []string {
	codes := make([]string, 0, len(v.Reasons)+len(v.Violations))
	for _, r := range v.Reasons {
		codes = append(codes, r.Code)
	}
	for _, vi := range v.Violations {
		codes = append(codes, vi.Rule)
	}
	return codes
}
