package relay

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

const (
	// codeUserRejected is the spec's code for "User rejected sampling
	// request" (2025-06-18 and 2025-11-25 §Error Handling). The SDK has no
	// constant for it. Used for every "no": policy deny, reviewer reject,
	// completion withheld.
	codeUserRejected = -1
	// codeInvalidParams: the request is malformed (a structural violation).
	codeInvalidParams = jsonrpc.CodeInvalidParams
	// codeInternal: nobody decided — policy error, store error, expiry, no
	// host — or the host's answer could not be returned. Never a "no".
	codeInternal = jsonrpc.CodeInternalError
)

// Reason codes the relay adds to verdicts it settles itself.
const (
	reasonRejected = "review-rejected"
	reasonExpired  = "review-expired"
	reasonAbandon  = "review-abandoned"
	reasonNoHost   = "no-host"
)

// errorData is the only detail an upstream gets: the upstream may be the
// attacker, so rule internals, policy paths and matched text stay in the
// decision log.
type errorData struct {
	DecisionID  string   `json:"decision_id"`
	ReasonCodes []string `json:"reason_codes"`
}

// wireError maps a Verdict that did not pass to the JSON-RPC error the
// upstream receives (DESIGN §2, wire mapping). It is the only such mapping.
func wireError(v engine.Verdict) *jsonrpc.Error {
	code, msg := wireCodeMessage(v)
	data, _ := json.Marshal(errorData{DecisionID: v.DecisionID, ReasonCodes: v.ReasonCodes()})
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}

func wireCodeMessage(v engine.Verdict) (int64, string) {
	switch {
	case v.Outcome == engine.OutcomeBlocker && len(v.Violations) > 0 && v.Stage == engine.StageResult:
		return codeInternal, "host returned an invalid completion: " + validate.Title(v.Violations[0].Rule)
	case v.Outcome == engine.OutcomeBlocker && len(v.Violations) > 0:
		return codeInvalidParams, validate.Title(v.Violations[0].Rule)
	case v.Outcome == engine.OutcomeBlocker && hasReason(v, reasonRejected):
		return codeUserRejected, "User rejected sampling request: rejected by reviewer"
	case v.Outcome == engine.OutcomeBlocker && v.Stage == engine.StageResult:
		return codeUserRejected, "User rejected sampling request: completion withheld by policy"
	case v.Outcome == engine.OutcomeBlocker:
		return codeUserRejected, "User rejected sampling request: denied by policy"
	case v.Outcome == engine.OutcomeError && hasReason(v, reasonExpired):
		return codeInternal, reasonMessage(v, reasonExpired)
	case v.Outcome == engine.OutcomeError && hasReason(v, reasonAbandon):
		return codeInternal, "review abandoned: the request can no longer be answered"
	case v.Outcome == engine.OutcomeError && hasReason(v, reasonNoHost):
		return codeInternal, "no host can answer sampling requests"
	case v.Outcome == engine.OutcomeError && hasReason(v, "store-error"):
		return codeInternal, "review queue unavailable"
	case v.Outcome == engine.OutcomeError && hasReason(v, "policy-error"):
		return codeInternal, "policy evaluation failed"
	}
	// An error, or a pass/escalate that should never reach here: fail closed.
	return codeInternal, "sampling request could not be decided"
}

func hasReason(v engine.Verdict, code string) bool {
	_, ok := findReason(v, code)
	return ok
}

// reasonMessage returns the message of a reason the relay itself wrote,
// such as the expiry sentence; policy messages never reach the wire.
func reasonMessage(v engine.Verdict, code string) string {
	r, _ := findReason(v, code)
	return r.Message
}

func findReason(v engine.Verdict, code string) (engine.Reason, bool) {
	for _, r := range v.Reasons {
		if r.Code == code {
			return r, true
		}
	}
	return engine.Reason{}, false
}
