package engine

import (
	"time"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// InputVersion names the shape of the policy input document. Policies may
// check it; it changes only when a field changes meaning.
const InputVersion = "mcpxfw/v1"

// Server identifies the upstream that asked. Name is the operator's
// configured name, the only identity policies may trust; Reported is what
// the upstream claims about itself (serverInfo) and is for display only.
type Server struct {
	Name     string         `json:"name"`
	Label    string         `json:"label"`
	Era      string         `json:"protocol"`
	Reported map[string]any `json:"reported"`
}

// Host describes the client that will answer: its protocol version and the
// capabilities it declared, as JSON.
type Host struct {
	Era          string         `json:"protocol"`
	Capabilities map[string]any `json:"capabilities"`
}

// Origin is the host call a sampling request belongs to, when known.
type Origin struct {
	Method string `json:"method"`
	Name   string `json:"name"`
	Round  int    `json:"round"`
}

// Approval records that a person approved an escalation; with it set, the
// policy's review rules are satisfied but its deny rules still win.
type Approval struct {
	DecisionID string    `json:"decision_id"`
	By         string    `json:"by"`
	At         time.Time `json:"at"`
	Edited     bool      `json:"edited"`
}

// Kind is what an upstream asks of the host: a completion from the
// user's model, information from the user, or the user's roots. Each has
// its own validation rules and facts, and the same policy query, queue and
// logs.
type Kind string

const (
	KindSampling    Kind = "sampling"
	KindElicitation Kind = "elicitation"
	KindRoots       Kind = "roots"
)

// Request is one request an upstream makes of the host, as the firewall
// sees it: what it asks for, who asked, who answers, and the exact params
// bytes that will be forwarded. A Request without a Kind is a sampling
// request (review items stored before there were kinds have none).
type Request struct {
	Kind   Kind                  `json:"kind,omitempty"`
	Server Server                `json:"server"`
	Host   Host                  `json:"host"`
	Origin Origin                `json:"origin"`
	Caps   validate.Capabilities `json:"caps"`
	Params []byte                `json:"-"`
	// Approved lists the reason codes a person approved for this item at
	// the request stage; the relay sets it for the result stage after an
	// approval, and input.approved_codes carries it: a review reason with
	// one of these codes is satisfied there, so an approval is not asked
	// for twice (a new code still holds the item).
	Approved []string `json:"approved,omitempty"`
	// Validated is the request stage's validation of Params
	// (Verdict.Validated), handed back for the result stage and for a
	// re-decision after approval so the same bytes are not validated
	// again. nil, or made from other bytes: Params is validated.
	Validated *Validated `json:"-"`
	// AwaitAnswer holds a fresh request the policy passes for an
	// operator's answer: the relay sets it when no host can answer the
	// request and an operator may (servers.<name>.operator_answer). The
	// engine then opens the request's review (reason ReasonAwaitAnswer)
	// as it opens an escalation's, with the decision and through the same
	// store step, so it is recorded, limited and announced the same way.
	// The policy's deny and review rules act first, as on any request.
	AwaitAnswer bool `json:"-"`
	// ReviewSlot, when set, is asked for a place before a review is opened
	// for this request (an escalation, or a request held for an answer):
	// an error opens none, and the decision fails closed with that error.
	// The relay takes one of its server's pending-review slots there, so
	// a slot is held only by a review, never by a decision that opens
	// none. It may be asked more than once for one decision (a charge
	// decided again on newer usage) and must give one place however often.
	ReviewSlot func() error `json:"-"`
	// Reservation is the request stage's Verdict.Reservation, handed to
	// the result stage: the decision whose charge the completion settles
	// (charge.go). "" settles none, and the completion is charged on its
	// own decision.
	Reservation string `json:"reservation,omitempty"`
}

// kindOf is r's kind, sampling when unset.
func (r Request) kindOf() Kind {
	if r.Kind == "" {
		return KindSampling
	}
	return r.Kind
}

// buildInput assembles the policy input document. It is the single
// definition of that document's shape (see policies/README.md and
// policies/schemas/input.json); values are JSON-shaped (maps, slices,
// strings, json.Number, ints) so OPA converts them without a reflection
// round trip. usage is nil when the policy will not run (a request blocked
// by validation), and the document then says {}.
func buildInput(stage Stage, s Request, request, result validate.Document, approval *Approval, usage Usage) map[string]any {
	in := map[string]any{
		"version":        InputVersion,
		"kind":           string(s.kindOf()),
		"stage":          string(stage),
		"server":         serverInput(s.Server),
		"host":           hostInput(s.Host),
		"origin":         map[string]any{"method": s.Origin.Method, "name": s.Origin.Name, "round": s.Origin.Round},
		"request":        request,
		"result":         nil,
		"facts":          factsOf(s.kindOf(), request, result),
		"usage":          usage.document(),
		"approval":       nil,
		"approved_codes": approvedCodes(stage, s.Approved),
		"violations":     []any{},
	}
	if result != nil {
		in["result"] = result
	}
	if approval != nil {
		in["approval"] = map[string]any{
			"decision_id": approval.DecisionID,
			"by":          approval.By,
			"at":          approval.At.UTC().Format(time.RFC3339),
			"edited":      approval.Edited,
		}
	}
	return in
}

// approvedCodes is input.approved_codes: the codes approved at the request
// stage, at the result stage only (a request-stage decision has nothing
// approved before it), never null.
func approvedCodes(stage Stage, codes []string) []any {
	if stage != StageResult {
		return []any{}
	}
	out := make([]any, len(codes))
	for i, c := range codes {
		out[i] = c
	}
	return out
}

func serverInput(s Server) map[string]any {
	reported := s.Reported
	if reported == nil {
		reported = map[string]any{}
	}
	return map[string]any{"name": s.Name, "label": s.Label, "protocol": s.Era, "reported": reported}
}

func hostInput(h Host) map[string]any {
	caps := h.Capabilities
	if caps == nil {
		caps = map[string]any{}
	}
	return map[string]any{"protocol": h.Era, "capabilities": caps}
}
