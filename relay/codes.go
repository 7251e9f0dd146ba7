package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// This file is the firewall's whole error vocabulary: every JSON-RPC error
// mcpx-fw itself sends, to an upstream or to a host, is built here, by
// wireError for a verdict or by one constructor per situation below. A
// message is short and fixed (it may name a configured server, a limit or
// a key the firewall minted, never text an upstream or a host wrote), and
// data is exactly {decision_id, reason_codes}, the decision id present
// where a decision exists. The one exception is -32021, whose data the
// spec fixes (requiredCapabilities). An upstream's own JSON-RPC error to a
// host's call is not the firewall's: it passes through like any result
// (passedThrough).

const (
	// codeUserRejected is the spec's code for "User rejected sampling
	// request" (2025-06-18 and 2025-11-25 §Error Handling). The SDK has no
	// constant for it. Used for every "no": policy deny, reviewer reject,
	// completion withheld, and the host's own refusal.
	codeUserRejected = -1
	// codeInvalidRequest: a request that cannot be served in this state
	// (a host that never initialized).
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
	// codeInvalidParams: the request is malformed (a structural violation,
	// a requestState that is not the firewall's, an answer missing).
	codeInvalidParams = jsonrpc.CodeInvalidParams
	// codeInternal: nobody decided — policy error, store error, expiry, no
	// host, an upstream gone — or an answer could not be returned. Never a
	// "no".
	codeInternal = jsonrpc.CodeInternalError
	// codeMissingCapability is 2026-07-28's MissingRequiredClientCapability
	// (-32021): the request needs a capability the host did not declare on
	// it. Older hosts get codeInvalidParams for the same situation.
	codeMissingCapability = mcp.CodeMissingRequiredClientCapabilities
	// codeRejectedByTransport is the SDK's code (-32005, "rejected by
	// transport") for a message its HTTP transport refused to write: the
	// peer never saw it. Read, never sent (see undelivered).
	codeRejectedByTransport = -32005
)

// Reason codes: what a refusal the relay makes itself is about. They go on
// the wire in data.reason_codes and into logs.
const (
	reasonRejected          = "review-rejected"
	reasonExpired           = "review-expired"
	reasonAbandon           = "review-abandoned"
	reasonNoHost            = "no-host"
	reasonHostRejected      = "host-rejected"
	reasonHostFailed        = "host-failed"
	reasonShuttingDown      = "shutting-down"
	reasonNotInitialized    = "not-initialized"
	reasonUnknownName       = "unknown-name"
	reasonUpstreamStart     = "upstream-start-failed"
	reasonUpstreamLost      = "upstream-lost"
	reasonUpstreamFailed    = "upstream-failed"
	reasonStateRejected     = "state-rejected"
	reasonAnswerMissing     = "answer-missing"
	reasonAnswerInvalid     = "answer-invalid"
	reasonMaxRounds         = "max-rounds"
	reasonDeferred          = "upstream-deferred"
	reasonCancelled         = "cancelled"
	reasonBridgeExpired     = "bridge-expired"
	reasonMissingCapability = "capability-missing"
	reasonUnknownInput      = "input-request-unknown"
	reasonInternal          = "internal"
)

// errorData is the only detail the other side gets: the upstream may be
// the attacker, so rule internals, policy paths and matched text stay in
// the decision log.
type errorData struct {
	DecisionID  string   `json:"decision_id,omitempty"`
	ReasonCodes []string `json:"reason_codes"`
}

// relayError builds every error of the vocabulary but -32021's.
func relayError(code int64, msg, decisionID string, reasons ...string) *jsonrpc.Error {
	if reasons == nil {
		reasons = []string{}
	}
	data, _ := json.Marshal(errorData{DecisionID: decisionID, ReasonCodes: reasons})
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}

// wireError maps a Verdict on a sampling request that did not pass to
// the JSON-RPC error the upstream receives (DESIGN §2, wire mapping).
func wireError(v engine.Verdict) *jsonrpc.Error { return wireErrorFor(engine.KindSampling, v) }

// wireErrorFor maps a Verdict on a request of kind k that did not pass to
// the JSON-RPC error the other side receives (DESIGN §2 and §2a). It is
// the only such mapping; the messages name the kind, nothing more.
func wireErrorFor(k engine.Kind, v engine.Verdict) *jsonrpc.Error {
	code, msg := wireCodeMessage(k, v)
	return relayError(code, msg, v.DecisionID, v.ReasonCodes()...)
}

// invalidResult names what a host returned that broke the rules, per kind.
var invalidResult = map[engine.Kind]string{
	engine.KindSampling:    "host returned an invalid completion",
	engine.KindElicitation: "host returned an invalid elicitation result",
	engine.KindRoots:       "host returned an invalid roots list",
}

// kindNoun is how the messages name a request of kind k.
func kindNoun(k engine.Kind) string {
	if k == "" {
		return string(engine.KindSampling)
	}
	return string(k)
}

func wireCodeMessage(k engine.Kind, v engine.Verdict) (int64, string) {
	noun := kindNoun(k)
	withheld := "completion withheld by policy"
	if k == engine.KindElicitation || k == engine.KindRoots {
		withheld = "answer withheld by policy"
	}
	switch {
	case v.Outcome == engine.OutcomeBlocker && len(v.Violations) > 0 && v.Stage == engine.StageResult:
		return codeInternal, invalidResult[engine.Kind(noun)] + ": " + validate.Title(v.Violations[0].Rule)
	case v.Outcome == engine.OutcomeBlocker && len(v.Violations) > 0:
		return codeInvalidParams, validate.Title(v.Violations[0].Rule)
	case v.Outcome == engine.OutcomeBlocker && hasReason(v, reasonRejected):
		return codeUserRejected, "User rejected " + noun + " request: rejected by reviewer"
	case v.Outcome == engine.OutcomeBlocker && v.Stage == engine.StageResult:
		return codeUserRejected, "User rejected " + noun + " request: " + withheld
	case v.Outcome == engine.OutcomeBlocker:
		return codeUserRejected, "User rejected " + noun + " request: denied by policy"
	case v.Outcome == engine.OutcomeError && hasReason(v, reasonExpired):
		return codeInternal, reasonMessage(v, reasonExpired)
	case v.Outcome == engine.OutcomeError && hasReason(v, reasonAbandon):
		return codeInternal, "review abandoned: the request can no longer be answered"
	case v.Outcome == engine.OutcomeError && hasReason(v, reasonNoHost):
		return codeInternal, "no host can answer " + noun + " requests"
	case v.Outcome == engine.OutcomeError && hasReason(v, "store-error"):
		return codeInternal, "review queue unavailable"
	case v.Outcome == engine.OutcomeError && hasReason(v, "policy-error"):
		return codeInternal, "policy evaluation failed"
	}
	// An error, or a pass/escalate that should never reach here: fail closed.
	return codeInternal, noun + " request could not be decided"
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

// passedThrough is an upstream's own JSON-RPC error to a host's call,
// relayed as the upstream sent it (code, message, data): it is the
// upstream's answer to the host, as a result would be, not the firewall's.
func passedThrough(we *jsonrpc.Error) *jsonrpc.Error { return we }

// errHostRejected: the host refused a request of kind k the firewall
// asked of it (-1 from the host). The upstream hears "no" (-1) under the
// request's decision; what the host wrote (its message and data) stays
// with the host.
func errHostRejected(k engine.Kind, decisionID string) *jsonrpc.Error {
	return relayError(codeUserRejected, "User rejected "+kindNoun(k)+" request: declined by the host", decisionID, reasonHostRejected)
}

// errHostFailed: the host could not answer a request of kind k (it
// failed, or did not answer before sampling.host_timeout, which bounds
// every request the firewall makes of a host). Nobody said no.
func errHostFailed(k engine.Kind, decisionID string, timedOut bool) *jsonrpc.Error {
	msg := "host " + kindNoun(k) + " failed: the host could not answer"
	if timedOut {
		msg = "host " + kindNoun(k) + " failed: no answer before sampling.host_timeout"
	}
	return relayError(codeInternal, msg, decisionID, reasonHostFailed)
}

// errNoHostFor: a request of kind k passed but nobody can answer it (no
// host session to push to, or a host that did not declare the kind). A
// request refused before any decision gets wireError's no-host verdict
// instead (see noHost).
func errNoHostFor(k engine.Kind, decisionID string) *jsonrpc.Error {
	return relayError(codeInternal, "no host can answer "+kindNoun(k)+" requests", decisionID, reasonNoHost)
}

// errShuttingDown: serve is stopping; the request was not served.
func errShuttingDown() *jsonrpc.Error {
	return relayError(codeInternal, "the firewall is shutting down", "", reasonShuttingDown)
}

// errNotInitialized: a legacy host's request on a session that never
// initialized.
func errNotInitialized() *jsonrpc.Error {
	return relayError(codeInvalidRequest, "the session is not initialized", "", reasonNotInitialized)
}

// errUnknownName: a tool or prompt name that no configured server's prefix
// (`<server>__`) starts. The name itself is not echoed.
func errUnknownName() *jsonrpc.Error {
	return relayError(codeInvalidParams, "unknown tool or prompt: names are <server>__<name>, one of the names listed", "", reasonUnknownName)
}

// errUpstreamStart: a configured server could not be started or
// initialized; its own error is logged, not sent.
func errUpstreamStart(server string) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("upstream %s failed to start", server), "", reasonUpstreamStart)
}

// errUpstreamLost: the server's connection ended (its process exited, its
// stream broke) and the firewall did not close it.
func errUpstreamLost(server string) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("upstream %s is gone: its connection was lost; it starts again when the host reconnects", server), "", reasonUpstreamLost)
}

// errUpstreamFailed: a call to the server failed without an answer of its
// own (a transport error, an unreadable answer); the detail is logged, not
// sent, since it may quote what the server wrote.
func errUpstreamFailed(server string) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("upstream %s: the call failed without an answer", server), "", reasonUpstreamFailed)
}

// errInternal: the firewall could not build or read one of its own
// messages (what names the step; a fixed phrase of the firewall's).
func errInternal(what string) *jsonrpc.Error {
	return relayError(codeInternal, what, "", reasonInternal)
}

// errStateRejected: a requestState the firewall did not issue for this
// call, or one altered, replayed, expired or no longer held; phrase is one
// of the firewall's fixed reasons.
func errStateRejected(phrase string) *jsonrpc.Error {
	return relayError(codeInvalidParams, "requestState rejected: "+phrase, "", reasonStateRejected)
}

// errAnswerMissing: a 2026-07-28 host's retry lacks an answer for a key the
// firewall handed it (keys are the firewall's own).
func errAnswerMissing(key string) *jsonrpc.Error {
	return relayError(codeInvalidParams, fmt.Sprintf("inputResponses has no answer for %q", key), "", reasonAnswerMissing)
}

// errAnswerInvalid: a 2026-07-28 host's answer to a key is not a result of
// the key's kind (k).
func errAnswerInvalid(k engine.Kind, key string) *jsonrpc.Error {
	return relayError(codeInvalidParams, fmt.Sprintf("inputResponses[%q] is not %s %s result", key, article(k), kindNoun(k)), "", reasonAnswerInvalid)
}

// article is "an" before elicitation, else "a".
func article(k engine.Kind) string {
	if k == engine.KindElicitation {
		return "an"
	}
	return "a"
}

// errMaxRounds: one host call took more input-request rounds, or bridged
// pushes, than limits.max_rounds.
func errMaxRounds(server string, limit int) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("upstream %s asked for input in more than %d rounds of one call (limits.max_rounds)", server, limit), "", reasonMaxRounds)
}

// errDeferred: a 2026-07-28 server kept answering a call with a bare
// requestState (load shedding) past the firewall's retries.
func errDeferred(server string, times int) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("upstream %s kept deferring the call (%d times)", server, times), "", reasonDeferred)
}

// errCancelled: the request was cancelled (by its caller, or because the
// call it belonged to ended) before it could be answered.
func errCancelled() *jsonrpc.Error {
	return relayError(codeInternal, "cancelled before it could be answered", "", reasonCancelled)
}

// errBridgeExpired: a bridged call's pushes waited longer than the state's
// lifetime for the host's retry.
func errBridgeExpired(ttl time.Duration) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("expired after %s awaiting the host's retry", ttl), "", reasonBridgeExpired)
}

// errBridgeGone: a host retried a bridged call that had already ended.
func errBridgeGone() *jsonrpc.Error {
	return relayError(codeInternal, "the bridged call ended before the host's retry", "", reasonBridgeExpired)
}

// errUnknownInputRequest: a 2026-07-28 server asked in inputRequests for
// something the firewall does not know how to relay.
func errUnknownInputRequest(server string) *jsonrpc.Error {
	return relayError(codeInvalidParams, fmt.Sprintf("upstream %s sent an input request of an unknown kind", server), "", reasonUnknownInput)
}

// errMissingCapability: an input request the host cannot answer because it
// did not declare what it needs: -32021 naming the capability in
// data.requiredCapabilities (the spec's shape) for a 2026-07-28 host,
// -32602 for an older one.
func errMissingCapability(modernHost bool, capability string) *jsonrpc.Error {
	msg := fmt.Sprintf("the host did not declare %s, which the upstream asked for", capability)
	if !modernHost {
		return relayError(codeInvalidParams, msg, "", reasonMissingCapability)
	}
	data, _ := json.Marshal(map[string]any{
		"requiredCapabilities": map[string]any{capability: map[string]any{}},
		"reason_codes":         []string{reasonMissingCapability},
	})
	return &jsonrpc.Error{Code: codeMissingCapability, Message: msg, Data: data}
}

// Routing: which upstream a host's request about a resource or a
// completion goes to (owners.go, lists.go). None quotes what the host
// sent: a URI is the host's text, and may be an upstream's, relayed
// through the model.

const (
	reasonResourceNotFound      = "resource-not-found"
	reasonResourceAmbiguous     = "resource-ambiguous"
	reasonResourceOwnersUnknown = "resource-owners-unknown"
	reasonCompletionsNotOffered = "completions-not-offered"
	reasonCompletionRefInvalid  = "completion-ref-invalid"
)

// errResourceNotFound: no upstream lists the URI (nor a template matching
// it), even after every upstream was listed again. The spec's
// resource-not-found (SEP-2164: -32602 "Resource not found", as the SDK's
// mcp.ResourceNotFoundError, without its data, which would echo the URI).
// Nobody was asked.
func errResourceNotFound() *jsonrpc.Error {
	return relayError(codeInvalidParams, "Resource not found", "", reasonResourceNotFound)
}

// errResourceClaimedTwice: more than one upstream claims the URI (lists
// it, or a template matching it), so its owner cannot be told and neither
// is asked. servers are the operator's names for them.
func errResourceClaimedTwice(servers []string) *jsonrpc.Error {
	return relayError(codeInvalidParams, fmt.Sprintf(
		"resource refused: servers %s all list it or a template matching it, so its owner is unknown; it was sent to none",
		strings.Join(servers, ", ")), "", reasonResourceAmbiguous)
}

// errResourceOwnersUnknown: an upstream's resources could not be listed;
// without its listing another server could look like the URI's only
// owner, so nobody is asked.
func errResourceOwnersUnknown(server string) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf(
		"resources of server %s could not be listed, so the owner of the resource is unknown; it was sent to none", server),
		"", reasonResourceOwnersUnknown)
}

// errCompletionsNotOffered: the prompt or resource a completion is about
// belongs to a server that did not declare completions.
func errCompletionsNotOffered(server string) *jsonrpc.Error {
	return relayError(jsonrpc.CodeMethodNotFound, fmt.Sprintf("server %s does not offer completions", server), "", reasonCompletionsNotOffered)
}

// errCompletionRefInvalid: a completion without a ref/prompt or
// ref/resource reference names no server.
func errCompletionRefInvalid() *jsonrpc.Error {
	return relayError(codeInvalidParams, "completion ref must be ref/prompt or ref/resource", "", reasonCompletionRefInvalid)
}

// Bridged calls: how many may hold an upstream session at once (bridge.go,
// bridgepool.go).

// reasonBridgeLimit: a bridged call refused because the limit on bridged
// calls was reached.
const reasonBridgeLimit = "bridge-limit"

// errBridgeLimit: a 2026-07-28 host's call to a server that pushes its
// sampling was refused at once, before any upstream started, because
// limit bridged calls (to this server, or to all servers, as key names)
// are already running or awaiting their hosts' retries. Nobody decided;
// the host may call again once one of those ends.
func errBridgeLimit(server, key string, limit int) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("upstream %s: %d bridged calls are already running or awaiting their hosts' retries (%s)", server, limit, key), "", reasonBridgeLimit)
}

// Limits on what upstreams and hosts may make the firewall hold
// (admission.go, and http.max_sessions in initialize.go).

const (
	reasonLimitReached   = "limit-reached"
	reasonSessionLimited = "session-limit"
)

// errLimitReached: a request that would take its server past a limit on
// what the firewall holds for it (requests in flight, pending reviews,
// bytes), refused at once: nothing was validated, decided or recorded, so
// no decision id (a review refused its slot as it would open is refused
// the same way; its decision is recorded, as an error). The message names the config key and its value, so an
// operator knows what to raise; server is the operator's own name for it.
// perHost says the limit is the one on a server's share within one host
// session.
func errLimitReached(key string, value int64, server string, perHost bool) *jsonrpc.Error {
	scope := "for server " + server
	if perHost {
		scope += " in this host session"
	}
	return relayError(codeInternal, fmt.Sprintf("%s (%d) reached %s", key, value, scope), "", reasonLimitReached)
}

// errSessionLimit: a host's initialize refused because http.max_sessions
// host sessions are open. Nobody chose; the host may try again once one
// ends.
func errSessionLimit(value int) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("http.max_sessions (%d) reached: too many host sessions are open", value), "", reasonSessionLimited)
}

// Elicitation and roots (DESIGN §2a): the same vocabulary, naming the
// kind (wireErrorFor, errHostRejected, errHostFailed, errNoHostFor,
// errAnswerInvalid), and the answers a legacy upstream's elicitation gets
// in place of an error.

// legacyElicitAnswer is what a legacy upstream's elicitation/create gets
// for the pipeline's answer res or its refusal err: a "no" (-1: policy
// deny, reviewer reject, an answer withheld by policy, the host's own
// refusal) is the result {"action":"decline"}; a review that expired
// (nobody chose) is {"action":"cancel"}; any other refusal (a violation,
// -32602; could not decide, -32603; an invalid answer from the host,
// -32603) stays the error it is. A decline or cancel the host sent itself
// is a result, and passes as sent.
func legacyElicitAnswer(res *mcp.ElicitResult, err error) (*mcp.ElicitResult, error) {
	var we *jsonrpc.Error
	switch {
	case err == nil:
		return res, nil
	case !errors.As(err, &we):
		return nil, err
	case we.Code == codeUserRejected:
		return &mcp.ElicitResult{Action: "decline"}, nil
	case we.Code == codeInternal && hasReasonCode(we, reasonExpired):
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	return nil, err
}

// errNotOffered: an upstream asked for a capability it was not offered
// (the host did not declare it, or servers.<name> withholds it): the
// request is malformed for its session (-32602), as a request needing an
// undeclared capability is for an older host. Nobody decided.
func errNotOffered(server, capability string) *jsonrpc.Error {
	return relayError(codeInvalidParams, fmt.Sprintf("server %s was not offered %s", server, capability), "", reasonMissingCapability)
}

// hasReasonCode reports whether one of the firewall's own errors names
// code among its reason codes.
func hasReasonCode(we *jsonrpc.Error, code string) bool {
	var d errorData
	if json.Unmarshal(we.Data, &d) != nil {
		return false
	}
	return slices.Contains(d.ReasonCodes, code)
}

// Input requests read as the SDK reads them (guard.go): the names of an
// entry's members.

// reasonInputMemberNames: an input request entry spells method or params
// otherwise than the spec does.
const reasonInputMemberNames = "input-request-member-names"

// errInputMemberNames: an entry of an upstream's inputRequests has a
// member whose name is "method" or "params" but for case ("Method",
// "PARAMS", or with a letter that folds to one of theirs, as "paramſ").
// The SDK reads entries with encoding/json, which matches such a name to
// the field without regard to case (the last match winning), so the entry
// would be acted on under a name the raw screen does not read. The result
// is refused as malformed (-32602) before anything decodes it. Nobody
// decided.
func errInputMemberNames() *jsonrpc.Error {
	return relayError(codeInvalidParams, `an input request names "method" or "params" otherwise than in lower case`, "", reasonInputMemberNames)
}

// URL elicitations an upstream requires with -32042 (urlelicit.go).

const (
	reasonURLElicitationsInvalid  = "url-elicitations-invalid"
	reasonURLElicitationUndecided = "url-elicitation-undecided"
)

// errURLElicitationRequired: the upstream's -32042 as the host gets it once
// every elicitation in it passed the request stage: the firewall's message,
// and data as the spec fixes it ({"elicitations": [...]}, like -32021's
// requiredCapabilities), holding only the cleared params, never what else
// the upstream wrote. Those params are the request the policy (and a
// reviewer) judged, message and URL included, as an elicitation/create
// forwarded to the host carries them.
func errURLElicitationRequired(cleared []*mcp.ElicitParams) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"elicitations": cleared})
	return &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "URL elicitation required", Data: data}
}

// errURLElicitationsInvalid: an upstream's -32042 whose data is not a list
// of 1 to limit elicitations; nothing in it can be decided, and the host is
// sent to none of it. Malformed (-32602); nobody decided.
func errURLElicitationsInvalid(server string, limit int) *jsonrpc.Error {
	return relayError(codeInvalidParams, fmt.Sprintf("upstream %s required URL elicitation without 1 to %d elicitations in its data", server, limit), "", reasonURLElicitationsInvalid)
}

// errURLElicitationUndecided: an upstream's -32042 to a request that is not
// a host's tool call, prompt or resource read (a list, a completion), where
// the firewall does not decide elicitations: nobody decided, so the host is
// sent to none of its URLs (-32603).
func errURLElicitationUndecided(server string) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("upstream %s required URL elicitation outside a call the firewall decides", server), "", reasonURLElicitationUndecided)
}

// Continuations across replicas (handedstore.go): a 2026-07-28 host's
// retry resumed by whichever replica it reaches.

const (
	reasonBridgeElsewhere = "bridge-elsewhere"
	reasonStateUnstored   = "state-unstored"
)

// errBridgeElsewhere: a 2026-07-28 host retried a bridged call on a
// firewall process other than the one that holds it (a replica behind a
// balancer without affinity, or a run of the firewall since restarted): a
// bridged call lives in that process's memory. Nobody decided; the state
// is not spent, so the same retry can still reach the right replica.
func errBridgeElsewhere() *jsonrpc.Error {
	return relayError(codeInternal, "the bridged call is held by another firewall replica: its retries must reach the replica that answered it", "", reasonBridgeElsewhere)
}

// errRoundNotStored: the input requests of a round could not be written
// to the review store for the host's retry, so none is handed out. Nobody
// decided.
func errRoundNotStored() *jsonrpc.Error {
	return relayError(codeInternal, "the input requests could not be stored for the retry", "", reasonStateUnstored)
}

// errRoundUnavailable: the review store did not answer when a host's
// retry came to take its round. Unless the store had taken the row before
// its answer was lost, the row stays until taken or expired, and the host
// may retry again.
func errRoundUnavailable() *jsonrpc.Error {
	return relayError(codeInternal, "the input requests of this requestState could not be read back; retry", "", reasonStateUnstored)
}

// What one message from an upstream may make the firewall hold
// (httpbody.go).

// reasonAnswerTooLarge: an upstream's answer larger than the firewall
// reads of one message.
const reasonAnswerTooLarge = "answer-too-large"

// errAnswerTooLarge: an HTTP upstream's answer to a call (its JSON body,
// an event of its stream, or the body of an error status) outgrew limit
// bytes, the most the firewall reads of one message from an upstream (as
// of a stdio line). It was read no further and its connection closed;
// nothing of it is quoted. Nobody decided.
func errAnswerTooLarge(server string, limit int) *jsonrpc.Error {
	return relayError(codeInternal, fmt.Sprintf("upstream %s: its answer exceeds %d bytes, the most the firewall reads of one message; refused", server, limit), "", reasonAnswerTooLarge)
}
