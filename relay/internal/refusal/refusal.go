package refusal

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

const (
	// CodeUserRejected is the spec's code for "User rejected sampling
	// request" (2025-06-18 and 2025-11-25 §Error Handling). The SDK has no
	// constant for it. Used for every "no": policy deny, reviewer reject,
	// completion withheld, and the host's own refusal.
	CodeUserRejected = -1
	// CodeInvalidRequest: a request that cannot be served in this state
	// (a host that never initialized).
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest
	// CodeInvalidParams: the request is malformed (a structural violation,
	// a requestState that is not the firewall's, an answer missing).
	CodeInvalidParams = jsonrpc.CodeInvalidParams
	// CodeInternal: nobody decided — policy error, store error, expiry, no
	// host, an upstream gone — or an answer could not be returned. Never a
	// "no".
	CodeInternal = jsonrpc.CodeInternalError
	// CodeMissingCapability is 2026-07-28's MissingRequiredClientCapability
	// (-32021): the request needs a capability the host did not declare on
	// it. Older hosts get CodeInvalidParams for the same situation.
	CodeMissingCapability = mcp.CodeMissingRequiredClientCapabilities
	// CodeRejectedByTransport is the SDK's code (-32005, "rejected by
	// transport") for a message its HTTP transport refused to write: the
	// peer never saw it. Read, never sent (see undelivered).
	CodeRejectedByTransport = -32005
)

// Reason codes: what a refusal the relay makes itself is about. They go on
// the wire in data.reason_codes and into logs.
const (
	ReasonRejected          = "review-rejected"
	ReasonExpired           = "review-expired"
	ReasonAbandon           = "review-abandoned"
	ReasonNoHost            = "no-host"
	ReasonHostRejected      = "host-rejected"
	ReasonHostFailed        = "host-failed"
	ReasonShuttingDown      = "shutting-down"
	ReasonNotInitialized    = "not-initialized"
	ReasonUnknownName       = "unknown-name"
	ReasonUpstreamDown      = "upstream-down"
	ReasonUpstreamLost      = "upstream-lost"
	ReasonUpstreamFailed    = "upstream-failed"
	ReasonStateRejected     = "state-rejected"
	ReasonAnswerMissing     = "answer-missing"
	ReasonAnswerInvalid     = "answer-invalid"
	ReasonMaxRounds         = "max-rounds"
	ReasonDeferred          = "upstream-deferred"
	ReasonCancelled         = "cancelled"
	ReasonBridgeExpired     = "bridge-expired"
	ReasonMissingCapability = "capability-missing"
	ReasonUnknownInput      = "input-request-unknown"
	ReasonInternal          = "internal"
)

// Data is the only detail the other side gets: the upstream may be
// the attacker, so rule internals, policy paths and matched text stay in
// the decision log.
type Data struct {
	DecisionID  string   `json:"decision_id,omitempty"`
	ReasonCodes []string `json:"reason_codes"`
}

// relayError builds every error of the vocabulary but -32021's.
func relayError(code int64, msg, decisionID string, reasons ...string) *jsonrpc.Error {
	if reasons == nil {
		reasons = []string{}
	}
	data, _ := json.Marshal(Data{DecisionID: decisionID, ReasonCodes: reasons})
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}

// ForSampling maps a Verdict on a sampling request that did not pass to
// the JSON-RPC error the upstream receives (ARCHITECTURE.md, Where refusals' words come from).
func ForSampling(v engine.Verdict) *jsonrpc.Error { return ForVerdict(engine.KindSampling, v) }

// ForVerdict maps a Verdict on a request of kind k that did not pass to
// the JSON-RPC error the other side receives, for every kind (ARCHITECTURE.md, Where refusals' words come
// from). It is
// the only such mapping; the messages name the kind, nothing more.
func ForVerdict(k engine.Kind, v engine.Verdict) *jsonrpc.Error {
	code, msg := wireCodeMessage(k, v)
	return relayError(code, msg, v.DecisionID, v.ReasonCodes()...)
}

// invalidResult names what a host returned that broke the rules, per kind.
var invalidResult = map[engine.Kind]string{
	engine.KindSampling:    "host returned an invalid completion",
	engine.KindElicitation: "host returned an invalid elicitation result",
	engine.KindRoots:       "host returned an invalid roots list",
}

// KindNoun is how the messages name a request of kind k.
func KindNoun(k engine.Kind) string {
	if k == "" {
		return string(engine.KindSampling)
	}
	return string(k)
}

func wireCodeMessage(k engine.Kind, v engine.Verdict) (int64, string) {
	noun := KindNoun(k)
	withheld := "completion withheld by policy"
	if k == engine.KindElicitation || k == engine.KindRoots {
		withheld = "answer withheld by policy"
	}
	switch {
	case v.Outcome == engine.OutcomeBlocker && len(v.Violations) > 0 && v.Stage == engine.StageResult:
		return CodeInternal, invalidResult[engine.Kind(noun)] + ": " + validate.Title(v.Violations[0].Rule)
	case v.Outcome == engine.OutcomeBlocker && len(v.Violations) > 0:
		return CodeInvalidParams, validate.Title(v.Violations[0].Rule)
	case v.Outcome == engine.OutcomeBlocker && hasReason(v, ReasonRejected):
		return CodeUserRejected, "User rejected " + noun + " request: rejected by reviewer"
	case v.Outcome == engine.OutcomeBlocker && v.Stage == engine.StageResult:
		return CodeUserRejected, "User rejected " + noun + " request: " + withheld
	case v.Outcome == engine.OutcomeBlocker:
		return CodeUserRejected, "User rejected " + noun + " request: denied by policy"
	case v.Outcome == engine.OutcomeError && hasReason(v, ReasonExpired):
		return CodeInternal, reasonMessage(v, ReasonExpired)
	case v.Outcome == engine.OutcomeError && hasReason(v, ReasonAbandon):
		return CodeInternal, "review abandoned: the request can no longer be answered"
	case v.Outcome == engine.OutcomeError && hasReason(v, ReasonNoHost):
		return CodeInternal, "no host can answer " + noun + " requests"
	case v.Outcome == engine.OutcomeError && hasReason(v, "store-error"):
		return CodeInternal, "review queue unavailable"
	case v.Outcome == engine.OutcomeError && hasReason(v, "policy-error"):
		return CodeInternal, "policy evaluation failed"
	}
	// An error, or a pass/escalate that should never reach here: fail closed.
	return CodeInternal, noun + " request could not be decided"
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

// PassedThrough is an upstream's own JSON-RPC error to a host's call,
// relayed as the upstream sent it (code, message, data): it is the
// upstream's answer to the host, as a result would be, not the firewall's.
func PassedThrough(we *jsonrpc.Error) *jsonrpc.Error { return we }

// HostRejected: the host refused a request of kind k the firewall
// asked of it (-1 from the host). The upstream hears "no" (-1) under the
// request's decision; what the host wrote (its message and data) stays
// with the host.
func HostRejected(k engine.Kind, decisionID string) *jsonrpc.Error {
	return relayError(CodeUserRejected, "User rejected "+KindNoun(k)+" request: declined by the host", decisionID, ReasonHostRejected)
}

// HostFailed: the host could not answer a request of kind k (it
// failed, or did not answer before sampling.host_timeout, which bounds
// every request the firewall makes of a host). Nobody said no.
func HostFailed(k engine.Kind, decisionID string, timedOut bool) *jsonrpc.Error {
	msg := "host " + KindNoun(k) + " failed: the host could not answer"
	if timedOut {
		msg = "host " + KindNoun(k) + " failed: no answer before sampling.host_timeout"
	}
	return relayError(CodeInternal, msg, decisionID, ReasonHostFailed)
}

// NoHostFor: a request of kind k passed but nobody can answer it (no
// host session to push to, or a host that did not declare the kind). A
// request refused before any decision gets ForSampling's no-host verdict
// instead (see noHost).
func NoHostFor(k engine.Kind, decisionID string) *jsonrpc.Error {
	return relayError(CodeInternal, "no host can answer "+KindNoun(k)+" requests", decisionID, ReasonNoHost)
}

// ShuttingDown: serve is stopping; the request was not served.
func ShuttingDown() *jsonrpc.Error {
	return relayError(CodeInternal, "the firewall is shutting down", "", ReasonShuttingDown)
}

// NotInitialized: a legacy host's request on a session that never
// initialized.
func NotInitialized() *jsonrpc.Error {
	return relayError(CodeInvalidRequest, "the session is not initialized", "", ReasonNotInitialized)
}

// UnknownName: a tool or prompt name that no configured server's prefix
// (`<server>__`) starts. The name itself is not echoed.
func UnknownName() *jsonrpc.Error {
	return relayError(CodeInvalidParams, "unknown tool or prompt: names are <server>__<name>, one of the names listed", "", ReasonUnknownName)
}

// UpstreamDown: a request for a server whose session is down (it failed
// to start, or its connection was lost) while the host's other servers
// serve. why is one of the firewall's fixed words for it (never what the
// server wrote, which is logged); since is when it went down. The host's
// other servers are not affected.
func UpstreamDown(server string, since time.Time, why string) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("upstream %s is down since %s (%s); the other servers still answer: retry later, and see `mcpx-fw status` or the firewall's log for why",
		server, since.UTC().Format(time.RFC3339), why), "", ReasonUpstreamDown)
}

// UpstreamLost: the server's connection ended (its process exited, its
// stream broke) and the firewall did not close it.
func UpstreamLost(server string) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("upstream %s is gone: its connection was lost during the call; the firewall starts it again, retry later", server), "", ReasonUpstreamLost)
}

// UpstreamFailed: a call to the server failed without an answer of its
// own (a transport error, an unreadable answer); the detail is logged, not
// sent, since it may quote what the server wrote.
func UpstreamFailed(server string) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("upstream %s: the call failed without an answer", server), "", ReasonUpstreamFailed)
}

// Internal: the firewall could not build or read one of its own
// messages (what names the step; a fixed phrase of the firewall's).
func Internal(what string) *jsonrpc.Error {
	return relayError(CodeInternal, what, "", ReasonInternal)
}

// StateRejected: a requestState the firewall did not issue for this
// call, or one altered, replayed, expired or no longer held; phrase is one
// of the firewall's fixed reasons.
func StateRejected(phrase string) *jsonrpc.Error {
	return relayError(CodeInvalidParams, "requestState rejected: "+phrase, "", ReasonStateRejected)
}

// AnswerMissing: a 2026-07-28 host's retry lacks an answer for a key the
// firewall handed it (keys are the firewall's own).
func AnswerMissing(key string) *jsonrpc.Error {
	return relayError(CodeInvalidParams, fmt.Sprintf("inputResponses has no answer for %q", key), "", ReasonAnswerMissing)
}

// AnswerInvalid: a 2026-07-28 host's answer to a key is not a result of
// the key's kind (k).
func AnswerInvalid(k engine.Kind, key string) *jsonrpc.Error {
	return relayError(CodeInvalidParams, fmt.Sprintf("inputResponses[%q] is not %s %s result", key, article(k), KindNoun(k)), "", ReasonAnswerInvalid)
}

// article is "an" before elicitation, else "a".
func article(k engine.Kind) string {
	if k == engine.KindElicitation {
		return "an"
	}
	return "a"
}

// MaxRounds: one host call took more input-request rounds, or bridged
// pushes, than limits.max_rounds.
func MaxRounds(server string, limit int) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("upstream %s asked for input in more than %d rounds of one call (limits.max_rounds)", server, limit), "", ReasonMaxRounds)
}

// Deferred: a 2026-07-28 server kept answering a call with a bare
// requestState (load shedding) past the firewall's retries.
func Deferred(server string, times int) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("upstream %s kept deferring the call (%d times)", server, times), "", ReasonDeferred)
}

// Cancelled: the request was cancelled (by its caller, or because the
// call it belonged to ended) before it could be answered.
func Cancelled() *jsonrpc.Error {
	return relayError(CodeInternal, "cancelled before it could be answered", "", ReasonCancelled)
}

// BridgeExpired: a bridged call's pushes waited longer than the state's
// lifetime for the host's retry.
func BridgeExpired(ttl time.Duration) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("expired after %s awaiting the host's retry", ttl), "", ReasonBridgeExpired)
}

// BridgeGone: a host retried a bridged call that had already ended.
func BridgeGone() *jsonrpc.Error {
	return relayError(CodeInternal, "the bridged call ended before the host's retry", "", ReasonBridgeExpired)
}

// UnknownInputRequest: a 2026-07-28 server asked in inputRequests for
// something the firewall does not know how to relay.
func UnknownInputRequest(server string) *jsonrpc.Error {
	return relayError(CodeInvalidParams, fmt.Sprintf("upstream %s sent an input request of an unknown kind", server), "", ReasonUnknownInput)
}

// MissingCapability: an input request the host cannot answer because it
// did not declare what it needs: -32021 naming the capability in
// data.requiredCapabilities (the spec's shape) for a 2026-07-28 host,
// -32602 for an older one.
func MissingCapability(modernHost bool, capability string) *jsonrpc.Error {
	msg := fmt.Sprintf("the host did not declare %s, which the upstream asked for", capability)
	if !modernHost {
		return relayError(CodeInvalidParams, msg, "", ReasonMissingCapability)
	}
	data, _ := json.Marshal(map[string]any{
		"requiredCapabilities": map[string]any{capability: map[string]any{}},
		"reason_codes":         []string{ReasonMissingCapability},
	})
	return &jsonrpc.Error{Code: CodeMissingCapability, Message: msg, Data: data}
}

// Routing: which upstream a host's request about a resource or a
// completion goes to (owners.go, lists.go). None quotes what the host
// sent: a URI is the host's text, and may be an upstream's, relayed
// through the model.

const (
	ReasonResourceNotFound      = "resource-not-found"
	ReasonResourceAmbiguous     = "resource-ambiguous"
	ReasonResourceOwnersUnknown = "resource-owners-unknown"
	ReasonCompletionsNotOffered = "completions-not-offered"
	ReasonCompletionRefInvalid  = "completion-ref-invalid"
)

// ResourceNotFound: no upstream lists the URI (nor a template matching
// it), even after every upstream was listed again. The spec's
// resource-not-found (SEP-2164: -32602 "Resource not found", as the SDK's
// mcp.ResourceNotFoundError, without its data, which would echo the URI).
// Nobody was asked.
func ResourceNotFound() *jsonrpc.Error {
	return relayError(CodeInvalidParams, "Resource not found", "", ReasonResourceNotFound)
}

// ResourceClaimedTwice: more than one upstream claims the URI (lists
// it, or a template matching it), so its owner cannot be told and neither
// is asked. servers are the operator's names for them.
func ResourceClaimedTwice(servers []string) *jsonrpc.Error {
	return relayError(CodeInvalidParams, fmt.Sprintf(
		"resource refused: servers %s all list it or a template matching it, so its owner is unknown; it was sent to none",
		strings.Join(servers, ", ")), "", ReasonResourceAmbiguous)
}

// ResourceOwnersUnknown: an upstream's resources could not be listed;
// without its listing another server could look like the URI's only
// owner, so nobody is asked.
func ResourceOwnersUnknown(server string) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf(
		"resources of server %s could not be listed, so the owner of the resource is unknown; it was sent to none", server),
		"", ReasonResourceOwnersUnknown)
}

// CompletionsNotOffered: the prompt or resource a completion is about
// belongs to a server that did not declare completions.
func CompletionsNotOffered(server string) *jsonrpc.Error {
	return relayError(jsonrpc.CodeMethodNotFound, fmt.Sprintf("server %s does not offer completions", server), "", ReasonCompletionsNotOffered)
}

// CompletionRefInvalid: a completion without a ref/prompt or
// ref/resource reference names no server.
func CompletionRefInvalid() *jsonrpc.Error {
	return relayError(CodeInvalidParams, "completion ref must be ref/prompt or ref/resource", "", ReasonCompletionRefInvalid)
}

// Bridged calls: how many may hold an upstream session at once (bridge.go,
// bridgepool.go).

// ReasonBridgeLimit: a bridged call refused because the limit on bridged
// calls was reached.
const ReasonBridgeLimit = "bridge-limit"

// BridgeLimit: a 2026-07-28 host's call to a server that pushes its
// sampling was refused at once, before any upstream started, because
// limit bridged calls (to this server, or to all servers, as key names)
// are already running or awaiting their hosts' retries. Nobody decided;
// the host may call again once one of those ends.
func BridgeLimit(server, key string, limit int) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("upstream %s: %d bridged calls are already running or awaiting their hosts' retries (%s)", server, limit, key), "", ReasonBridgeLimit)
}

// Limits on what upstreams and hosts may make the firewall hold
// (package admit, and http.max_sessions in relay).

const (
	ReasonLimitReached   = "limit-reached"
	ReasonSessionLimited = "session-limit"
)

// LimitReached: a request that would take its server past a limit on
// what the firewall holds for it (requests in flight, pending reviews,
// bytes), refused at once: nothing was validated, decided or recorded, so
// no decision id (a review refused its slot as it would open is refused
// the same way; its decision is recorded, as an error). The message names the config key and its value, so an
// operator knows what to raise; server is the operator's own name for it.
// perHost says the limit is the one on a server's share within one host
// session.
func LimitReached(key string, value int64, server string, perHost bool) *jsonrpc.Error {
	scope := "for server " + server
	if perHost {
		scope += " in this host session"
	}
	return relayError(CodeInternal, fmt.Sprintf("%s (%d) reached %s", key, value, scope), "", ReasonLimitReached)
}

// SessionLimit: a host's initialize refused because http.max_sessions
// host sessions are open. Nobody chose; the host may try again once one
// ends.
func SessionLimit(value int) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("http.max_sessions (%d) reached: too many host sessions are open", value), "", ReasonSessionLimited)
}

// Elicitation and roots: the same vocabulary, naming the
// kind (ForVerdict, HostRejected, HostFailed, NoHostFor,
// AnswerInvalid), and the answers a legacy upstream's elicitation gets
// in place of an error.

// LegacyElicitAnswer is what a legacy upstream's elicitation/create gets
// for the pipeline's answer res or its refusal err: a "no" (-1: policy
// deny, reviewer reject, an answer withheld by policy, the host's own
// refusal) is the result {"action":"decline"}; a review that expired
// (nobody chose) is {"action":"cancel"}; any other refusal (a violation,
// -32602; could not decide, -32603; an invalid answer from the host,
// -32603) stays the error it is. A decline or cancel the host sent itself
// is a result, and passes as sent.
func LegacyElicitAnswer(res *mcp.ElicitResult, err error) (*mcp.ElicitResult, error) {
	var we *jsonrpc.Error
	switch {
	case err == nil:
		return res, nil
	case !errors.As(err, &we):
		return nil, err
	case we.Code == CodeUserRejected:
		return &mcp.ElicitResult{Action: "decline"}, nil
	case we.Code == CodeInternal && HasReason(we, ReasonExpired):
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	return nil, err
}

// NotOffered: an upstream asked for a capability it was not offered
// (the host did not declare it, or servers.<name> withholds it): the
// request is malformed for its session (-32602), as a request needing an
// undeclared capability is for an older host. Nobody decided.
func NotOffered(server, capability string) *jsonrpc.Error {
	return relayError(CodeInvalidParams, fmt.Sprintf("server %s was not offered %s", server, capability), "", ReasonMissingCapability)
}

// HasReason reports whether one of the firewall's own errors names
// code among its reason codes.
func HasReason(we *jsonrpc.Error, code string) bool {
	var d Data
	if json.Unmarshal(we.Data, &d) != nil {
		return false
	}
	return slices.Contains(d.ReasonCodes, code)
}

// Input requests read as the SDK reads them (guard.go): the names of an
// entry's members.

// ReasonInputMemberNames: an input request entry spells method or params
// otherwise than the spec does.
const ReasonInputMemberNames = "input-request-member-names"

// InputMemberNames: an entry of an upstream's inputRequests has a
// member whose name is "method" or "params" but for case ("Method",
// "PARAMS", or with a letter that folds to one of theirs, as "paramſ").
// The SDK reads entries with encoding/json, which matches such a name to
// the field without regard to case (the last match winning), so the entry
// would be acted on under a name the raw screen does not read. The result
// is refused as malformed (-32602) before anything decodes it. Nobody
// decided.
func InputMemberNames() *jsonrpc.Error {
	return relayError(CodeInvalidParams, `an input request names "method" or "params" otherwise than in lower case`, "", ReasonInputMemberNames)
}

// URL elicitations an upstream requires with -32042 (urlelicit.go).

const (
	ReasonURLElicitationsInvalid  = "url-elicitations-invalid"
	ReasonURLElicitationUndecided = "url-elicitation-undecided"
)

// URLElicitationRequired: the upstream's -32042 as the host gets it once
// every elicitation in it passed the request stage: the firewall's message,
// and data as the spec fixes it ({"elicitations": [...]}, like -32021's
// requiredCapabilities), holding only the cleared params, never what else
// the upstream wrote. Those params are the request the policy (and a
// reviewer) judged, message and URL included, as an elicitation/create
// forwarded to the host carries them.
func URLElicitationRequired(cleared []*mcp.ElicitParams) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"elicitations": cleared})
	return &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "URL elicitation required", Data: data}
}

// URLElicitationsInvalid: an upstream's -32042 whose data is not a list
// of 1 to limit elicitations; nothing in it can be decided, and the host is
// sent to none of it. Malformed (-32602); nobody decided.
func URLElicitationsInvalid(server string, limit int) *jsonrpc.Error {
	return relayError(CodeInvalidParams, fmt.Sprintf("upstream %s required URL elicitation without 1 to %d elicitations in its data", server, limit), "", ReasonURLElicitationsInvalid)
}

// URLElicitationUndecided: an upstream's -32042 to a request that is not
// a host's tool call, prompt or resource read (a list, a completion), where
// the firewall does not decide elicitations: nobody decided, so the host is
// sent to none of its URLs (-32603).
func URLElicitationUndecided(server string) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("upstream %s required URL elicitation outside a call the firewall decides", server), "", ReasonURLElicitationUndecided)
}

// Continuations across replicas (handbackstore.go): a 2026-07-28 host's
// retry resumed by whichever replica it reaches.

const (
	ReasonBridgeElsewhere  = "bridge-elsewhere"
	ReasonStateUnstored    = "state-unstored"
	ReasonBridgeHolderGone = "bridge-holder-gone"
	ReasonHandoverTimeout  = "handover-timeout"
)

// BridgeElsewhere: a 2026-07-28 host retried a bridged call on a
// firewall process other than the one that holds it, and the two share
// no review store to hand the retry over (replicas without store.url, or
// a run of the firewall since restarted): a bridged call lives in that
// process's memory. Nobody decided; the state is not spent, so the same
// retry can still reach the right replica.
func BridgeElsewhere() *jsonrpc.Error {
	return relayError(CodeInternal, "the bridged call is held by another firewall replica: its retries must reach the replica that answered it", "", ReasonBridgeElsewhere)
}

// BridgeHolderGone: a 2026-07-28 host retried a bridged call on a
// replica other than the one holding it, and that one is gone (stopped,
// killed, or its lease on the store lost): the call died with it, and
// its retry cannot be resumed anywhere. Nothing was handed over; the host
// may call the tool again.
func BridgeHolderGone() *jsonrpc.Error {
	return relayError(CodeInternal, "the firewall replica holding the bridged call is gone (stopped, or its lease lost): call the tool again", "", ReasonBridgeHolderGone)
}

// HandoverTimeout: a retry handed to the replica holding its bridged
// call got no answer from it within wait; the handover was withdrawn, so
// nothing that replica answers later is delivered.
func HandoverTimeout(wait time.Duration) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("the firewall replica holding the bridged call did not answer its retry within %s", wait), "", ReasonHandoverTimeout)
}

// HandoverUnavailable: the review store did not answer while a retry
// was handed to the replica holding its bridged call. Unless the retry
// was handed over before the answer was lost, the host may retry again.
func HandoverUnavailable() *jsonrpc.Error {
	return relayError(CodeInternal, "the retry could not be handed to the firewall replica holding the bridged call; retry", "", ReasonStateUnstored)
}

// RoundNotStored: the input requests of a round could not be written
// to the review store for the host's retry, so none is handed out. Nobody
// decided.
func RoundNotStored() *jsonrpc.Error {
	return relayError(CodeInternal, "the input requests could not be stored for the retry", "", ReasonStateUnstored)
}

// RoundUnavailable: the review store did not answer when a host's
// retry came to take its round. Unless the store had taken the row before
// its answer was lost, the row stays until taken or expired, and the host
// may retry again.
func RoundUnavailable() *jsonrpc.Error {
	return relayError(CodeInternal, "the input requests of this requestState could not be read back; retry", "", ReasonStateUnstored)
}

// What one message from an upstream may make the firewall hold
// (httpbody.go).

// ReasonAnswerTooLarge: an upstream's answer larger than the firewall
// reads of one message.
const ReasonAnswerTooLarge = "answer-too-large"

// AnswerTooLarge: an HTTP upstream's answer to a call (its JSON body,
// an event of its stream, or the body of an error status) outgrew limit
// bytes, the most the firewall reads of one message from an upstream (as
// of a stdio line). It was read no further and its connection closed;
// nothing of it is quoted. Nobody decided.
func AnswerTooLarge(server string, limit int) *jsonrpc.Error {
	return relayError(CodeInternal, fmt.Sprintf("upstream %s: its answer exceeds %d bytes, the most the firewall reads of one message; refused", server, limit), "", ReasonAnswerTooLarge)
}
