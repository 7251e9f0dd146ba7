package refusal

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// TestExpiryOnTheWire: an expired review (reason review-expired, with
// review.ExpiryMessage, the sentence review show prints before it
// happens) is -32603 with that sentence for every kind, and a legacy
// elicitation's result {"action": "cancel"}: what cmd/mcpx-fw/render's
// expiryWords promises the operator.
func TestExpiryOnTheWire(t *testing.T) {
	msg := review.ExpiryMessage(time.Minute)
	v := engine.Verdict{Outcome: engine.OutcomeError, DecisionID: "dc-1", Reasons: []engine.Reason{{Code: ReasonExpired, Message: msg}}}
	for _, k := range []engine.Kind{engine.KindSampling, engine.KindElicitation, engine.KindRoots} {
		if we := ForVerdict(k, v); we.Code != CodeInternal || we.Message != msg {
			t.Errorf("%s: %d %q, want -32603 %q", k, we.Code, we.Message, msg)
		}
	}
	res, err := LegacyElicitAnswer(nil, ForVerdict(engine.KindElicitation, v))
	if err != nil || res == nil || res.Action != "cancel" {
		t.Errorf("a legacy elicitation that expired gets %+v, %v; want the result {\"action\": \"cancel\"}", res, err)
	}
}

// TestWireError covers every outcome of the mapping from a verdict to the
// wire.
func TestWireError(t *testing.T) {
	missing := []validate.Violation{{Rule: "SMP-06.pairing", Path: "/messages/0", Message: "no tool_use for t1"}}
	cases := []struct {
		name     string
		v        engine.Verdict
		wantCode int64
		wantMsg  string
	}{
		{"structural violation", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageRequest, Violations: missing},
			-32602, "Tool result missing in request"},
		{"policy deny", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageRequest, Reasons: []engine.Reason{{Code: "max-tokens", Message: "secret detail"}}},
			-1, "User rejected sampling request: denied by policy"},
		{"reviewer reject", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageRequest, Reasons: []engine.Reason{{Code: ReasonRejected}}},
			-1, "User rejected sampling request: rejected by reviewer"},
		{"result denied", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageResult, Reasons: []engine.Reason{{Code: "secret-in-completion"}}},
			-1, "User rejected sampling request: completion withheld by policy"},
		{"invalid completion", engine.Verdict{Outcome: engine.OutcomeBlocker, Stage: engine.StageResult, Violations: []validate.Violation{{Rule: "RES-02.model"}}},
			-32603, "host returned an invalid completion: " + validate.Title("RES-02.model")},
		{"policy error", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: "policy-error"}}, Err: errors.New("conflict in /x.rego:3")},
			-32603, "policy evaluation failed"},
		{"store error", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: "store-error"}}},
			-32603, "review queue unavailable"},
		{"no host", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: ReasonNoHost}}},
			-32603, "no host can answer sampling requests"},
		{"expired", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: ReasonExpired, Message: "expired after 10m0s awaiting review"}}},
			-32603, "expired after 10m0s awaiting review"},
		{"abandoned", engine.Verdict{Outcome: engine.OutcomeError, Reasons: []engine.Reason{{Code: ReasonAbandon}}},
			-32603, "review abandoned: the request can no longer be answered"},
		{"unlabelled error", engine.Verdict{}, -32603, "sampling request could not be decided"},
		{"a pass never maps to success", engine.Verdict{Outcome: engine.OutcomePass}, -32603, "sampling request could not be decided"},
		{"an escalation never maps to success", engine.Verdict{Outcome: engine.OutcomeEscalate}, -32603, "sampling request could not be decided"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.DecisionID = "dc-0123456789abcdef"
			we := ForSampling(tc.v)
			if we.Code != tc.wantCode || we.Message != tc.wantMsg {
				t.Fatalf("ForSampling = %d %q, want %d %q", we.Code, we.Message, tc.wantCode, tc.wantMsg)
			}
			var data map[string]any
			if err := json.Unmarshal(we.Data, &data); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"decision_id": "dc-0123456789abcdef", "reason_codes": toAny(tc.v.ReasonCodes())}
			if diff := cmp.Diff(want, data); diff != "" {
				t.Errorf("data carries more or less than the decision id and reason codes (-want +got):\n%s", diff)
			}
		})
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestVocabulary table-tests every constructor of the vocabulary: its code, a
// fixed message that names no one but a configured server, a limit or a
// key the firewall minted, and data that is exactly {decision_id,
// reason_codes} (decision_id only where a decision exists).
func TestVocabulary(t *testing.T) {
	cases := []struct {
		name     string
		err      *jsonrpc.Error
		wantCode int64
		wantMsg  string
		decision string
		reason   string
	}{
		{"host rejected", HostRejected(engine.KindSampling, "dc-1"), -1, "User rejected sampling request: declined by the host", "dc-1", ReasonHostRejected},
		{"host failed", HostFailed(engine.KindSampling, "dc-1", false), -32603, "host sampling failed: the host could not answer", "dc-1", ReasonHostFailed},
		{"host timed out", HostFailed(engine.KindSampling, "dc-1", true), -32603, "host sampling failed: no answer before sampling.host_timeout", "dc-1", ReasonHostFailed},
		{"no host for a decision", NoHostFor(engine.KindSampling, "dc-1"), -32603, "no host can answer sampling requests", "dc-1", ReasonNoHost},
		{"shutting down", ShuttingDown(), -32603, "the firewall is shutting down", "", ReasonShuttingDown},
		{"not initialized", NotInitialized(), -32600, "the session is not initialized", "", ReasonNotInitialized},
		{"unknown name", UnknownName(), -32602, "unknown tool or prompt: names are <server>__<name>, one of the names listed", "", ReasonUnknownName},
		{"upstream down", UpstreamDown("notes", time.Date(2026, 12, 7, 17, 30, 2, 0, time.UTC), "start failed"), -32603, "upstream notes is down since 2026-12-07T17:30:02Z (start failed); the other servers still answer: retry later, and see `mcpx-fw status` or the firewall's log for why", "", ReasonUpstreamDown},
		{"upstream lost", UpstreamLost("notes"), -32603, "upstream notes is gone: its connection was lost during the call; the firewall starts it again, retry later", "", ReasonUpstreamLost},
		{"upstream failed", UpstreamFailed("notes"), -32603, "upstream notes: the call failed without an answer", "", ReasonUpstreamFailed},
		{"internal", Internal("result could not be encoded"), -32603, "result could not be encoded", "", ReasonInternal},
		{"state rejected", StateRejected("expired"), -32602, "requestState rejected: expired", "", ReasonStateRejected},
		{"answer missing", AnswerMissing("sampling-1-1"), -32602, `inputResponses has no answer for "sampling-1-1"`, "", ReasonAnswerMissing},
		{"answer invalid", AnswerInvalid(engine.KindSampling, "sampling-1-1"), -32602, `inputResponses["sampling-1-1"] is not a sampling result`, "", ReasonAnswerInvalid},
		{"max rounds", MaxRounds("notes", 8), -32603, "upstream notes asked for input in more than 8 rounds of one call (limits.max_rounds)", "", ReasonMaxRounds},
		{"deferred", Deferred("notes", 3), -32603, "upstream notes kept deferring the call (3 times)", "", ReasonDeferred},
		{"cancelled", Cancelled(), -32603, "cancelled before it could be answered", "", ReasonCancelled},
		{"bridge expired", BridgeExpired(5 * time.Minute), -32603, "expired after 5m0s awaiting the host's retry", "", ReasonBridgeExpired},
		{"bridge gone", BridgeGone(), -32603, "the bridged call ended before the host's retry", "", ReasonBridgeExpired},
		{"unknown input request", UnknownInputRequest("notes"), -32602, "upstream notes sent an input request of an unknown kind", "", ReasonUnknownInput},
		{"missing capability, legacy host", MissingCapability(false, "sampling"), -32602, "the host did not declare sampling, which the upstream asked for", "", ReasonMissingCapability},
		{"resource not found", ResourceNotFound(), -32602, "Resource not found", "", ReasonResourceNotFound},
		{"resource claimed twice", ResourceClaimedTwice([]string{"evil", "vault"}), -32602,
			"resource refused: servers evil, vault all list it or a template matching it, so its owner is unknown; it was sent to none", "", ReasonResourceAmbiguous},
		{"resource owners unknown", ResourceOwnersUnknown("notes"), -32603,
			"resources of server notes could not be listed, so the owner of the resource is unknown; it was sent to none", "", ReasonResourceOwnersUnknown},
		{"completions not offered", CompletionsNotOffered("notes"), -32601, "server notes does not offer completions", "", ReasonCompletionsNotOffered},
		{"completion ref invalid", CompletionRefInvalid(), -32602, "completion ref must be ref/prompt or ref/resource", "", ReasonCompletionRefInvalid},
		{"bridge limit", BridgeLimit("notes", "limits.max_bridged_calls_per_server", 16), -32603,
			"upstream notes: 16 bridged calls are already running or awaiting their hosts' retries (limits.max_bridged_calls_per_server)", "", ReasonBridgeLimit},
		{"limit reached", LimitReached("limits.max_pending_reviews", 32, "notes", false), -32603,
			"limits.max_pending_reviews (32) reached for server notes", "", ReasonLimitReached},
		{"limit reached in a host session", LimitReached("limits.max_in_flight_per_host", 24, "notes", true), -32603,
			"limits.max_in_flight_per_host (24) reached for server notes in this host session", "", ReasonLimitReached},
		{"session limit", SessionLimit(32), -32603, "http.max_sessions (32) reached: too many host sessions are open", "", ReasonSessionLimited},
		// Elicitation and roots.
		{"host rejected an elicitation", HostRejected(engine.KindElicitation, "dc-1"), -1, "User rejected elicitation request: declined by the host", "dc-1", ReasonHostRejected},
		{"host elicitation failed", HostFailed(engine.KindElicitation, "dc-1", false), -32603, "host elicitation failed: the host could not answer", "dc-1", ReasonHostFailed},
		{"host roots timed out", HostFailed(engine.KindRoots, "dc-1", true), -32603, "host roots failed: no answer before sampling.host_timeout", "dc-1", ReasonHostFailed},
		{"no host for an elicitation", NoHostFor(engine.KindElicitation, "dc-1"), -32603, "no host can answer elicitation requests", "dc-1", ReasonNoHost},
		{"elicitation answer invalid", AnswerInvalid(engine.KindElicitation, "name"), -32602, `inputResponses["name"] is not an elicitation result`, "", ReasonAnswerInvalid},
		{"roots answer invalid", AnswerInvalid(engine.KindRoots, "roots"), -32602, `inputResponses["roots"] is not a roots result`, "", ReasonAnswerInvalid},
		{"not offered", NotOffered("notes", "roots"), -32602, "server notes was not offered roots", "", ReasonMissingCapability},
		{"missing capability, elicitation", MissingCapability(false, "elicitation"), -32602, "the host did not declare elicitation, which the upstream asked for", "", ReasonMissingCapability},
		{"input member names", InputMemberNames(), -32602, `an input request names "method" or "params" otherwise than in lower case`, "", ReasonInputMemberNames},
		{"url elicitations invalid", URLElicitationsInvalid("notes", 64), -32602, "upstream notes required URL elicitation without 1 to 64 elicitations in its data", "", ReasonURLElicitationsInvalid},
		{"url elicitation undecided", URLElicitationUndecided("notes"), -32603, "upstream notes required URL elicitation outside a call the firewall decides", "", ReasonURLElicitationUndecided},
		// Continuations across replicas.
		{"bridge elsewhere", BridgeElsewhere(), -32603, "the bridged call is held by another firewall replica: its retries must reach the replica that answered it", "", ReasonBridgeElsewhere},
		{"bridge holder gone", BridgeHolderGone(), -32603, "the firewall replica holding the bridged call is gone (stopped, or its lease lost): call the tool again", "", ReasonBridgeHolderGone},
		{"handover timeout", HandoverTimeout(time.Minute), -32603, "the firewall replica holding the bridged call did not answer its retry within 1m0s", "", ReasonHandoverTimeout},
		{"handover unavailable", HandoverUnavailable(), -32603, "the retry could not be handed to the firewall replica holding the bridged call; retry", "", ReasonStateUnstored},
		{"round not stored", RoundNotStored(), -32603, "the input requests could not be stored for the retry", "", ReasonStateUnstored},
		{"round unavailable", RoundUnavailable(), -32603, "the input requests of this requestState could not be read back; retry", "", ReasonStateUnstored},
		// One message from an upstream.
		{"answer too large", AnswerTooLarge("notes", 16<<20), -32603,
			"upstream notes: its answer exceeds 16777216 bytes, the most the firewall reads of one message; refused", "", ReasonAnswerTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err.Code != tc.wantCode || tc.err.Message != tc.wantMsg {
				t.Errorf("= %d %q, want %d %q", tc.err.Code, tc.err.Message, tc.wantCode, tc.wantMsg)
			}
			want := map[string]any{"reason_codes": []any{tc.reason}}
			if tc.decision != "" {
				want["decision_id"] = tc.decision
			}
			var data map[string]any
			if err := json.Unmarshal(tc.err.Data, &data); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMissingCapabilityModern: -32021 carries the spec's
// data.requiredCapabilities, and the reason code beside it.
func TestMissingCapabilityModern(t *testing.T) {
	we := MissingCapability(true, "elicitation")
	if we.Code != -32021 {
		t.Fatalf("code %d, want -32021", we.Code)
	}
	var data map[string]any
	if err := json.Unmarshal(we.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}},
		"reason_codes": []any{ReasonMissingCapability}}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}
