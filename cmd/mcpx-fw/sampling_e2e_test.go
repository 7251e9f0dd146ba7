package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// hostAnswer is the completion the test host's "model" gives.
const hostAnswer = `{"role":"assistant","model":"test-model","stopReason":"endTurn","content":{"type":"text","text":"the host's answer"}}`

func answerWith(raw string) peer.Answer {
	return func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(raw), nil }
}

// hostWords is what a host writes into its own refusals; none of it may
// reach the upstream.
const hostWords = "HOST-WORDS /home/me/.config secret-route"

// refuseWith is a host that answers every sampling request with a JSON-RPC
// error of the given code, carrying its own message and data.
func refuseWith(code int64) peer.Answer {
	return func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, &peer.Error{Code: code, Message: hostWords, Data: json.RawMessage(`{"detail":"` + hostWords + `"}`)}
	}
}

// startFirewall starts `mcpx-fw serve --config cfg` under a test host that
// answers sampling with answer.
func startFirewall(t *testing.T, cfg string, answer peer.Answer) *peer.Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, Answer: answer, Tools: true})
	if err != nil {
		t.Fatalf("start serve: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

const (
	plainRequest    = `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":100}`
	secretRequest   = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the admin password?"}}],"maxTokens":100}`
	danglingRequest = `{"messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"t1","content":[{"type":"text","text":"42"}]}]}],"maxTokens":100}`
	overCapRequest  = `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":5000}`
)

// reviewer acts on the next escalation from another process, as an
// operator would, with the given review subcommand.
type reviewer func(t *testing.T, cfg string)

func approveNext(t *testing.T, cfg string) { actOnNext(t, cfg, "approve") }
func rejectNext(t *testing.T, cfg string)  { actOnNext(t, cfg, "reject", "--reason", "not today") }

func actOnNext(t *testing.T, cfg string, verb string, extra ...string) {
	id := waitPending(t, cfg)
	res := runCLI(t, append([]string{"review", verb, id, "--config", cfg}, extra...)...)
	if res.code != 0 {
		t.Errorf("review %s %s: exit %d: %s", verb, id, res.code, res.stderr)
	}
}

// waitPending polls `review list --json` until an item is pending.
func waitPending(t *testing.T, cfg string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res := runCLI(t, "review", "list", "--json", "--config", cfg)
		items, err := listLines[struct{ ID, State string }](res.stdout)
		if res.code == 0 && err == nil && len(items) > 0 {
			return items[0].ID
		}
	}
	t.Fatal("no pending review appeared")
	return ""
}

func TestSamplingThroughFirewall(t *testing.T) {
	cases := []struct {
		name      string
		params    string
		answer    string
		refuse    int64 // the host refuses with this code instead of answering
		review    reviewer
		wantCode  int64  // 0 = the completion comes back
		wantMsg   string // substring of the error message
		hostAsked bool
	}{
		{name: "permitted request is answered", params: plainRequest, answer: hostAnswer, hostAsked: true},
		{name: "dangling tool_result is -32602 and the host is never asked", params: danglingRequest, answer: hostAnswer,
			wantCode: -32602, wantMsg: "Tool result missing in request"},
		{name: "policy deny is -1 and the host is never asked", params: overCapRequest, answer: hostAnswer,
			wantCode: -1, wantMsg: "User rejected sampling request"},
		{name: "escalation approved from another process is answered", params: secretRequest, answer: hostAnswer,
			review: approveNext, hostAsked: true},
		{name: "escalation rejected is -1", params: secretRequest, answer: hostAnswer, review: rejectNext,
			wantCode: -1, wantMsg: "rejected by reviewer"},
		{name: "no decision before the timeout is -32603 naming expiry", params: secretRequest, answer: hostAnswer,
			wantCode: -32603, wantMsg: "expired after 2s awaiting review"},
		{name: "the host's own refusal is -1 in the firewall's words", params: plainRequest, refuse: -1, hostAsked: true,
			wantCode: -1, wantMsg: "User rejected sampling request: declined by the host"},
		{name: "a host failure is -32603 in the firewall's words", params: plainRequest, refuse: -32000, hostAsked: true,
			wantCode: -32603, wantMsg: "host sampling failed: the host could not answer"},
		{name: "completion without model is -32603, never the completion", params: plainRequest,
			answer: `{"role":"assistant","content":{"type":"text","text":"no model"}}`, hostAsked: true,
			wantCode: -32603, wantMsg: "host returned an invalid completion"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, repoPath(t, "policies"), 2*time.Second, peerServer("peer", 1000))
			answer := answerWith(tc.answer)
			if tc.refuse != 0 {
				answer = refuseWith(tc.refuse)
			}
			host := startFirewall(t, cfg, answer)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if tc.review != nil {
					tc.review(t, cfg)
				}
			}()
			got, err := host.Sample(t.Context(), json.RawMessage(tc.params))
			<-done
			if err != nil {
				t.Fatalf("sample tool: %v", err)
			}
			checkOutcome(t, got, tc.wantCode, tc.wantMsg)
			if asked := len(host.Asked) > 0; asked != tc.hostAsked {
				t.Errorf("host asked = %v, want %v", asked, tc.hostAsked)
			}
		})
	}
}

// checkOutcome asserts what the upstream received: the host's completion
// when wantCode is 0, else a JSON-RPC error with that code, a message
// containing wantMsg, and data holding only a decision id and reason codes.
func checkOutcome(t *testing.T, got *peer.SampleOutcome, wantCode int64, wantMsg string) {
	t.Helper()
	if wantCode == 0 {
		if got.Error != nil {
			t.Fatalf("upstream got error %d %q, want the completion", got.Error.Code, got.Error.Message)
		}
		if !strings.Contains(string(got.Completion), "the host's answer") {
			t.Fatalf("upstream got %s, want the host's completion", got.Completion)
		}
		return
	}
	if got.Error == nil {
		t.Fatalf("upstream got completion %s, want error %d", got.Completion, wantCode)
	}
	if got.Error.Code != wantCode || !strings.Contains(got.Error.Message, wantMsg) {
		t.Fatalf("upstream got error %d %q, want %d containing %q", got.Error.Code, got.Error.Message, wantCode, wantMsg)
	}
	var data map[string]any
	if err := json.Unmarshal(got.Error.Data, &data); err != nil {
		t.Fatalf("error data %s: %v", got.Error.Data, err)
	}
	if id, _ := data["decision_id"].(string); !strings.HasPrefix(id, "dc-") || len(data) != 2 {
		t.Errorf("error data = %s, want exactly decision_id and reason_codes", got.Error.Data)
	}
	if strings.Contains(got.Error.Message+string(got.Error.Data), "HOST-WORDS") {
		t.Errorf("the upstream got the host's own words: %q %s", got.Error.Message, got.Error.Data)
	}
}

func TestBrokenPolicyFailsClosed(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "testdata/policies/broken-runtime"), time.Minute, peerServer("peer", 0))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	got, err := host.Sample(t.Context(), json.RawMessage(plainRequest))
	if err != nil {
		t.Fatal(err)
	}
	checkOutcome(t, got, -32603, "policy evaluation failed")
	if len(host.Asked) != 0 {
		t.Error("the host was asked although the policy could not decide")
	}
}
