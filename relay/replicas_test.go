package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// replicaKey is the seal key the replicas of a test share (seal.key_file).
var replicaKey = []byte("0123456789abcdef0123456789abcdef")

// replicaPair is two firewall replicas behind one address: each its own
// Proxy, engine and Store, on one review queue and one seal key. The
// queue is one SQLite file here, which takes the same code path as one
// PostgreSQL database.
func replicaPair(t *testing.T, names ...string) (*Proxy, *Proxy) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	return newTestProxyOn(t, dir, replicaKey, nil, names...), newTestProxyOn(t, dir, replicaKey, nil, names...)
}

// wantRejected fails t unless err is a -32602 requestState refusal saying
// phrase.
func wantRejected(t *testing.T, err error, phrase string) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != refusal.CodeInvalidParams || !strings.Contains(we.Message, phrase) {
		t.Fatalf("err = %v, want -32602 saying %q", err, phrase)
	}
}

// TestRetryOnAnotherReplica: a 2026-07-28 host's call gets input_required
// from one replica and its retry lands on the other, which resumes it from
// the shared store: the answer passes that replica's result stage (a good
// one reaches the upstream, one without a model is refused as an invalid
// completion), and the same state replayed on the first replica is
// refused as used.
func TestRetryOnAnotherReplica(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer *mcp.CreateMessageWithToolsResult
		want   string // in the result, or in the error
	}{
		{"answer passes", hiResult(), `"hi"`},
		{"answer refused by the result stage", &mcp.CreateMessageWithToolsResult{Role: "assistant",
			Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, "host returned an invalid completion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p1, p2 := replicaPair(t, "alpha", "beta")
			host1, host2 := manualHost(t, p1), manualHost(t, p2)
			first := askInput(t, host1, "alpha__sample_input")
			key := keyOf(first.InputRequests)
			res, err := host2.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sample_input",
				Arguments:    map[string]any{"params": json.RawMessage(helloParams)},
				RequestState: first.RequestState, InputResponses: mcp.InputResponseMap{key: tc.answer}})
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("retry on the other replica: %v, want %q", err, tc.want)
				}
			} else if res.IsError || res.NeedsInput() || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, tc.want) {
				t.Fatalf("retry on the other replica: %+v, want a result with %s", res, tc.want)
			} else {
				var got peer.InputOutcome
				if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil || len(got.States) != 1 {
					t.Fatalf("upstream outcome %s (%v)", res.Content[0].(*mcp.TextContent).Text, err)
				}
			}
			_, err = retry(t.Context(), host1, "alpha__sample_input", key, first.RequestState)
			wantRejected(t, err, "already used")
		})
	}
}

// TestRetryAdmissionReleased: once another replica resumed a round, the
// replica that handed it out no longer counts it as in flight.
func TestRetryAdmissionReleased(t *testing.T) {
	p1, p2 := replicaPair(t, "alpha", "beta")
	p1.store.PollInterval = 10 * time.Millisecond
	p1.cfg.StateTTL = time.Hour // the expiry does not release it first
	host1, host2 := manualHost(t, p1), manualHost(t, p2)
	first := askInput(t, host1, "alpha__sample_input")
	if got := inFlight(p1, "alpha"); got != 1 {
		t.Fatalf("%d in flight on the first replica while the host holds the round, want 1", got)
	}
	if _, err := retry(t.Context(), host2, "alpha__sample_input", keyOf(first.InputRequests), first.RequestState); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		n := inFlight(p1, "alpha")
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d still in flight on the first replica after the other resumed the round", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// inFlight is what p's admission counts in flight for server.
func inFlight(p *Proxy, server string) int {
	return p.admit.Held(server).InFlight
}

// TestRetryReplicaTrust: what a replica refuses of a retry that reaches
// it: a state sealed with another key than the replicas share, and a
// state (sealed with the shared key) whose nonce names another call's
// row, which is neither resumed nor spends that row: the other call's own
// retry still completes.
func TestRetryReplicaTrust(t *testing.T) {
	t.Run("another key", func(t *testing.T) {
		p1, _ := replicaPair(t, "alpha", "beta")
		stranger := newTestProxyOn(t, filepath.Join(t.TempDir(), "state"), []byte("another key, 32 bytes long......"), nil, "alpha", "beta")
		first := askInput(t, manualHost(t, stranger), "alpha__sample_input")
		_, err := retry(t.Context(), manualHost(t, p1), "alpha__sample_input", keyOf(first.InputRequests), first.RequestState)
		wantRejected(t, err, "tampered")
	})
	t.Run("nonce of another call", func(t *testing.T) {
		p1, p2 := replicaPair(t, "alpha", "beta")
		host1, host2 := manualHost(t, p1), manualHost(t, p2)
		a := askInput(t, host1, "alpha__sample_input")
		argsB := map[string]any{"params": json.RawMessage(helloParams), "rounds": 2}
		b, err := host1.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sample_input", Arguments: argsB})
		if err != nil || !b.NeedsInput() {
			t.Fatalf("second call: %+v %v", b, err)
		}
		contA, err := p1.sealer.Unseal(a.RequestState, "alpha", seal.CallDigest("tools/call", "alpha__sample_input", mustJSON(t, map[string]any{"params": json.RawMessage(helloParams)})))
		if err != nil {
			t.Fatal(err)
		}
		contB, err := p1.sealer.Unseal(b.RequestState, "alpha", seal.CallDigest("tools/call", "alpha__sample_input", mustJSON(t, argsB)))
		if err != nil {
			t.Fatal(err)
		}
		contA.Nonce = contB.Nonce
		forged, err := p1.sealer.Encode(contA)
		if err != nil {
			t.Fatal(err)
		}
		_, err = retry(t.Context(), host2, "alpha__sample_input", keyOf(a.InputRequests), forged)
		wantRejected(t, err, "already used")
		res, err := host2.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sample_input", Arguments: argsB,
			RequestState: b.RequestState, InputResponses: mcp.InputResponseMap{keyOf(b.InputRequests): hiResult()}})
		if err != nil || !res.NeedsInput() {
			t.Fatalf("the other call's own retry: %+v %v, want its next round", res, err)
		}
		if _, err := retry(t.Context(), host2, "alpha__sample_input", keyOf(a.InputRequests), a.RequestState); err != nil {
			t.Fatalf("the first call's own retry: %v", err)
		}
	})
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bridgedReplicas is n replicas on one store and key, whose one server
// pushes (a legacy upstream, so a 2026-07-28 host's call to it is
// bridged), each polling the store every few milliseconds.
func bridgedReplicas(t *testing.T, n int) []*Proxy {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	ps := make([]*Proxy, n)
	for i := range ps {
		ps[i] = newTestProxyOn(t, dir, replicaKey, nil, "peer")
		ps[i].cfg.Upstreams[0].Era = "legacy"
		ps[i].store.PollInterval = 5 * time.Millisecond
	}
	return ps
}

// TestBridgedRetryOnAnotherReplica: a bridged call lives in the replica
// that parked it; a retry that reaches another replica is handed to that
// one, which resumes the upstream's push with the host's answer and
// whose result the host gets from the replica it retried on. The same
// state replayed on the holder afterwards is refused as used, and the
// handover's row is gone.
func TestBridgedRetryOnAnotherReplica(t *testing.T) {
	ps := bridgedReplicas(t, 2)
	host1, host2 := manualHost(t, ps[0]), manualHost(t, ps[1])
	args := map[string]any{"params": json.RawMessage(helloParams)}
	first, err := host1.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args})
	if err != nil || !first.NeedsInput() {
		t.Fatalf("first call: %+v %v", first, err)
	}
	again := &mcp.CallToolParams{Name: "sample", Arguments: args, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{keyOf(first.InputRequests): hiResult()}}
	res, err := host2.CallTool(t.Context(), again)
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"hi"`) {
		t.Fatalf("retry on the other replica: %+v %v, want the upstream's result with the host's answer", res, err)
	}
	_, err = host1.CallTool(t.Context(), again)
	wantRejected(t, err, "already used")
	if _, ok, err := ps[1].store.WithdrawHandover(t.Context(), nonceOf(t, ps[0], first.RequestState, "sample", args)); ok || err != nil {
		t.Errorf("the handover's row after its answer was read: answered %v, %v; want gone", ok, err)
	}
}

// nonceOf is the nonce of the state p sealed for a call of tool with args.
func nonceOf(t *testing.T, p *Proxy, state, tool string, args map[string]any) string {
	t.Helper()
	cont, err := p.sealer.Unseal(state, "peer", seal.CallDigest("tools/call", tool, mustJSON(t, args)))
	if err != nil {
		t.Fatal(err)
	}
	return cont.Nonce
}

// TestBridgedRetryReplayedOnTwoReplicas: one retry of a bridged call
// sent at once to two replicas that do not hold it: the upstream resumes
// once; the other retry is refused as a used state.
func TestBridgedRetryReplayedOnTwoReplicas(t *testing.T) {
	ps := bridgedReplicas(t, 3)
	hosts := []*mcp.ClientSession{manualHost(t, ps[0]), manualHost(t, ps[1]), manualHost(t, ps[2])}
	args := map[string]any{"params": json.RawMessage(helloParams)}
	first, err := hosts[0].CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args})
	if err != nil || !first.NeedsInput() {
		t.Fatalf("first call: %+v %v", first, err)
	}
	errs := make(chan error, 2)
	for _, h := range hosts[1:] {
		again := &mcp.CallToolParams{Name: "sample", Arguments: args, RequestState: first.RequestState,
			InputResponses: mcp.InputResponseMap{keyOf(first.InputRequests): hiResult()}} // the SDK writes into it
		go func() {
			res, err := h.CallTool(t.Context(), again)
			if err == nil && (res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"hi"`)) {
				err = fmt.Errorf("unexpected result %+v", res)
			}
			errs <- err
		}()
	}
	var done, refused int
	for range 2 {
		err := <-errs
		var we *jsonrpc.Error
		switch {
		case err == nil:
			done++
		case errors.As(err, &we) && we.Code == refusal.CodeInvalidParams && strings.Contains(we.Message, "already used"):
			refused++
		default:
			t.Errorf("a replayed retry: %v", err)
		}
	}
	if done != 1 || refused != 1 {
		t.Fatalf("replayed retry on two replicas: %d completed, %d refused as used; want 1 and 1", done, refused)
	}
}

// TestStoredRoundRoundTrip: what the store keeps of a round is the round:
// kind, request as cleared (approved codes, capabilities, params), review.
func TestStoredRoundRoundTrip(t *testing.T) {
	in := map[string]pipeline.Entry{
		"sampling-1-1": {Kind: pipeline.Sampling, ReviewID: "rv-1", Request: engine.Request{
			Kind:     engine.KindSampling,
			Server:   engine.Server{Name: "alpha", Label: "Alpha", Era: "2026-07-28", Reported: map[string]any{"name": "up", "n": 1.5}},
			Host:     engine.Host{Era: "2026-07-28", Capabilities: map[string]any{"sampling": map[string]any{"tools": map[string]any{}}}},
			Origin:   engine.Origin{Method: "tools/call", Name: "alpha__x", Round: 2},
			Caps:     validate.Capabilities{Tools: true, Context: true},
			Params:   []byte(helloParams),
			Approved: []string{"needs-review", "large"},
		}},
		"elicitation-1-2": {Kind: pipeline.Elicitation, Request: engine.Request{Kind: engine.KindElicitation, Caps: validate.Capabilities{Form: true}, Params: []byte(`{"mode":"form"}`)}},
		"roots-1-3":       {Kind: pipeline.Roots, Request: engine.Request{Kind: engine.KindRoots}},
	}
	payload, err := encodeRound(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeRound(payload)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round after the store:\n%+v\nwant\n%+v", out, in)
	}
	// The key is the upstream's: an error (which is logged) never quotes it.
	if _, err := decodeRound([]byte(`{"entries":{"UPSTREAM-KEY":{"kind":"telepathy"}}}`)); err == nil || strings.Contains(err.Error(), "UPSTREAM-KEY") {
		t.Errorf("an entry of an unknown kind: %v, want an error without its key", err)
	}
}

// TestHandoverForgedRow: a handover's row whose payload the replicas did
// not seal for it (written by whoever can write to the database: bytes
// of their own, or a box sealed for another row) resumes nothing: the
// holder answers it with an error without spending the state, and the
// host's own retry then completes on the holder.
func TestHandoverForgedRow(t *testing.T) {
	for name, payload := range map[string]func(p *Proxy, state string) []byte{
		"not sealed": func(*Proxy, string) []byte { return []byte(`{"state":"x","answers":{}}`) },
		"sealed for another row": func(p *Proxy, state string) []byte {
			box, err := p.sealer.Box(mustJSON(t, handoverAsk{State: state, Answers: json.RawMessage(`{}`)}), "another nonce")
			if err != nil {
				t.Fatal(err)
			}
			return box
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := bridgedReplicas(t, 1)[0]
			host := manualHost(t, p)
			args := map[string]any{"params": json.RawMessage(helloParams)}
			first, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args})
			if err != nil || !first.NeedsInput() {
				t.Fatalf("first call: %+v %v", first, err)
			}
			nonce := nonceOf(t, p, first.RequestState, "sample", args)
			err = p.store.AskHandover(t.Context(), review.Handover{Nonce: nonce, Holder: p.replica, Server: "peer",
				Call: seal.CallDigest("tools/call", "sample", mustJSON(t, args)), Expires: time.Now().Add(time.Minute),
				Payload: payload(p, first.RequestState)})
			if err != nil {
				t.Fatal(err)
			}
			box := awaitHandedAnswer(t, p, nonce)
			var r handoverReply
			if plain, err := p.sealer.Unbox(box, nonce); err != nil || json.Unmarshal(plain, &r) != nil || r.Error == nil {
				t.Fatalf("the holder's answer to a forged row: %+v (%v), want an error", r, err)
			}
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args, RequestState: first.RequestState,
				InputResponses: mcp.InputResponseMap{keyOf(first.InputRequests): hiResult()}})
			if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"hi"`) {
				t.Fatalf("the host's own retry after the forged row: %+v %v", res, err)
			}
		})
	}
}

// awaitHandedAnswer waits for the answer to the handover for nonce.
func awaitHandedAnswer(t *testing.T, p *Proxy, nonce string) []byte {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		box, ok, err := p.store.HandoverAnswer(t.Context(), nonce)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return box
		}
	}
	t.Fatal("the holder did not answer the handover within 10s")
	return nil
}

// TestHandoverWithdrawnEndsTheCall: a retry handed to the holder whose
// host leaves while the holder waits on the call's next step (a second
// push, escalated for review) is withdrawn, and the holder then ends the
// call as it would had the host left it there: the pending review is
// abandoned at once, not left until its deadline.
func TestHandoverWithdrawnEndsTheCall(t *testing.T) {
	ps := bridgedReplicas(t, 2)
	for _, p := range ps {
		p.cfg.HostTimeout = time.Hour // no deadline ends the handover first
	}
	host1, host2 := manualHost(t, ps[0]), manualHost(t, ps[1])
	args := map[string]any{"params": json.RawMessage(secretParams), "times": 2}
	first := callApproved(t, ps[0], host1, args)
	ctx, leave := context.WithCancel(t.Context())
	second := make(chan string, 1)
	go func() {
		id, _ := awaitPendingReview(ctx, ps[0].store)
		second <- id
		leave()
	}()
	_, err := host2.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: args, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{keyOf(first.InputRequests): hiResult()}})
	if err == nil {
		t.Fatal("the retry whose host left completed")
	}
	id := <-second
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		it, err := ps[0].store.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if it.State == review.StateAbandoned {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second push's review is %s 10s after its handover was withdrawn; want abandoned", it.State)
		}
	}
}

// awaitPendingReview returns the id of the first review pending in st.
func awaitPendingReview(ctx context.Context, st *review.Store) (string, error) {
	for ctx.Err() == nil {
		items, err := st.List(ctx, review.Filter{})
		if err != nil {
			return "", err
		}
		if len(items) > 0 {
			return items[0].ID, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return "", ctx.Err()
}

// TestHandoverCountsAsBridgedCall: a retry handed to the holder counts as
// a bridged call on the replica it reached while it waits, so a host that
// floods a replica with retries (each carrying a state the holder sealed,
// spent or not) makes it write at most limits.max_bridged_calls rows, and
// wait on as many: past that, the retry is refused at once, before
// anything is written, and its state is not spent.
func TestHandoverCountsAsBridgedCall(t *testing.T) {
	ps := bridgedReplicas(t, 2)
	for _, p := range ps {
		p.cfg.HostTimeout = time.Hour // no deadline ends the first handover
	}
	ps[1].cfg.MaxBridged = 1
	host1, host2 := manualHost(t, ps[0]), manualHost(t, ps[1])
	waiting := map[string]any{"params": json.RawMessage(secretParams), "times": 2}
	first := callApproved(t, ps[0], host1, waiting)
	quick := map[string]any{"params": json.RawMessage(helloParams)}
	other, err := host1.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: quick})
	if err != nil || !other.NeedsInput() {
		t.Fatalf("second call: %+v %v", other, err)
	}
	// The first call's retry is handed over and waits on its next push's review.
	ctx, leave := context.WithCancel(t.Context())
	defer leave()
	go host2.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: waiting, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{keyOf(first.InputRequests): hiResult()}})
	if _, err := awaitPendingReview(ctx, ps[0].store); err != nil {
		t.Fatal(err)
	}
	again := func() *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "sample", Arguments: quick, RequestState: other.RequestState,
			InputResponses: mcp.InputResponseMap{keyOf(other.InputRequests): hiResult()}}
	}
	_, err = host2.CallTool(t.Context(), again())
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "limits.max_bridged_calls") {
		t.Fatalf("a second handover on a replica allowing one bridged call: %v, want refused under limits.max_bridged_calls", err)
	}
	res, err := host1.CallTool(t.Context(), again())
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"hi"`) {
		t.Fatalf("the refused retry on the holder: %+v %v, want it resumed (its state unspent)", res, err)
	}
}

// TestHandoverAnswerTooLarge: an upstream's result that fits its frame
// but that Go encodes past the row's cap (each '<' becomes six bytes) is
// answered to the asker as the firewall's error, which fits, so the host
// hears at once rather than at the handover's deadline.
func TestHandoverAnswerTooLarge(t *testing.T) {
	p := bridgedReplicas(t, 1)[0]
	h := review.Handover{Nonce: "n1", Server: "peer"}
	big := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("<", review.MaxContinuationBytes/6+1)}}}
	box, err := p.handoverAnswer(h, big, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(box) > review.MaxContinuationBytes {
		t.Fatalf("the answer is %d bytes, over the row's cap of %d: the asker would wait until its deadline", len(box), review.MaxContinuationBytes)
	}
	plain, err := p.sealer.Unbox(box, h.Nonce)
	var r handoverReply
	if err != nil || json.Unmarshal(plain, &r) != nil || r.Error == nil || r.Error.Code != refusal.CodeInternal {
		t.Fatalf("the answer to a result too large: %s (%v), want the firewall's error", plain, err)
	}
}

// callApproved calls sample with args on host, whose push p holds for
// review and approves once it is pending, and returns the call's answer:
// the input requests the host is to answer.
func callApproved(t *testing.T, p *Proxy, host *mcp.ClientSession, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	approved := make(chan error, 1)
	go func() {
		id, err := awaitPendingReview(t.Context(), p.store)
		if err == nil {
			_, err = p.store.Approve(t.Context(), id, "test", "")
		}
		approved <- err
	}()
	first, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args})
	if err != nil || !first.NeedsInput() {
		t.Fatalf("first call: %+v %v", first, err)
	}
	if err := <-approved; err != nil {
		t.Fatal(err)
	}
	return first
}
