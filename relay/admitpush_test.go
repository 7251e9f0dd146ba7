package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// pushLimit is the per-host in-flight limit these tests run under, and
// hostLimitReached the refusal past it.
const (
	pushLimit        = 5
	hostLimitReached = "limits.max_in_flight_per_host (5) reached for server peer in this host session"
)

// rootsHost is a host that declares roots and keeps each roots/list push
// open until release is closed, counting the pushes that reach it.
func rootsHost(asked *atomic.Int32, release <-chan struct{}, opts *mcp.ClientOptions) *mcp.Client {
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	opts.Capabilities = &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts)
	c.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				asked.Add(1)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	})
	return c
}

// rootsTally reads what the roots load tools report.
func rootsTally(t *testing.T, res *mcp.CallToolResult) peer.RootsTally {
	t.Helper()
	var out peer.RootsTally
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatalf("%v: %s", err, res.Content[0].(*mcp.TextContent).Text)
	}
	return out
}

// wantTally checks that answered requests got a list and refused ones the
// per-host limit's -32603, data limit-reached.
func wantTally(t *testing.T, got peer.RootsTally, answered, refused int) {
	t.Helper()
	ok := got.Answered == answered
	switch {
	case refused == 0:
		ok = ok && len(got.Refused) == 0
	default:
		ok = ok && len(got.Refused) == 1 && got.Refused[0].Count == refused && isLimitRefusal(got.Refused[0].Error)
	}
	if !ok {
		t.Errorf("upstream got %+v; want %d lists and %d refusals -32603 %q, data limit-reached", got, answered, refused, hostLimitReached)
	}
}

func isLimitRefusal(e peer.Error) bool {
	return e.Code == refusal.CodeInternal && e.Message == hostLimitReached && compact(e.Data) == `{"reason_codes":["limit-reached"]}`
}

// TestRootsPushesAdmitted: a legacy upstream's roots/list pushes count
// against its in-flight limit as sampling requests do: of 30 pushed at
// once, 5 (limits.max_in_flight_per_host) reach the host and are held
// there, and the other 25 are refused at once, while those 5 still wait,
// with the limit's -32603.
func TestRootsPushesAdmitted(t *testing.T) {
	p := newLimitedProxy(t, Limits{HostInFlight: pushLimit}, time.Minute, "peer")
	var asked atomic.Int32
	release := make(chan struct{})
	host := connectClient(t, p.Proxy, "2025-11-25", rootsHost(&asked, release, nil))
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "roots_each", Arguments: map[string]any{"count": 30}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	eventually(t, "5 roots requests at the host and 25 refused", func() bool {
		return asked.Load() == pushLimit && p.admit.Refusals("peer", "limits.max_in_flight_per_host") == 30-pushLimit
	})
	if held := p.admit.Held("peer"); held.InFlight != pushLimit {
		t.Errorf("%+v held while the host holds %d roots requests", held, pushLimit)
	}
	close(release)
	if res := <-done; res != nil {
		wantTally(t, rootsTally(t, res), pushLimit, 30-pushLimit)
	}
	if n := asked.Load(); n != pushLimit {
		t.Errorf("%d roots requests reached the host, want %d", n, pushLimit)
	}
	eventually(t, "every hold released", func() bool { return p.admit.Held("peer") == admit.Claim{} })
}

// TestRootsInputsAdmitted: a 2026-07-28 upstream's roots entries count
// against its limits, each one request in flight, as sampling entries do:
// asked of a legacy host by push, the round is held until it is answered,
// and a round past the limit is refused whole, the host never asked.
func TestRootsInputsAdmitted(t *testing.T) {
	p := newLimitedProxy(t, Limits{HostInFlight: pushLimit}, time.Minute, "peer")
	p.cfg.Upstreams[0].Era = modernEra
	var asked atomic.Int32
	release := make(chan struct{})
	host := connectClient(t, p.Proxy, "2025-11-25", rootsHost(&asked, release, nil))
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "roots_input_each", Arguments: map[string]any{"count": pushLimit}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	eventually(t, "the first entry at the host", func() bool { return asked.Load() == 1 })
	if held := p.admit.Held("peer"); held.InFlight != pushLimit {
		t.Errorf("%+v held while a round of %d roots entries is asked; want %d in flight", held, pushLimit, pushLimit)
	}
	close(release)
	if res := <-done; res != nil {
		wantTally(t, rootsTally(t, res), pushLimit, 0)
	}
	eventually(t, "every hold released", func() bool { return p.admit.Held("peer") == admit.Claim{} })

	before := asked.Load()
	_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "roots_input_each", Arguments: map[string]any{"count": pushLimit + 1}})
	wantLimitError(t, err)
	if n := asked.Load() - before; n != 0 {
		t.Errorf("the host was asked %d times for a round past the limit", n)
	}
}

// TestRootsHandedBackAdmitted: roots entries handed to a 2026-07-28 host
// are in flight until its retry, as sampling entries are: a host holding
// two rounds of 2 has 4 of the 5 places, and a third round of 2 is
// refused; the retry gives its round's places back.
func TestRootsHandedBackAdmitted(t *testing.T) {
	p := newLimitedProxy(t, Limits{HostInFlight: pushLimit}, time.Minute, "peer")
	p.cfg.Upstreams[0].Era = modernEra
	var asked atomic.Int32
	host := connectClient(t, p.Proxy, modernEra, rootsHost(&asked, nil, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}))
	call := func() (*mcp.CallToolResult, error) {
		return host.CallTool(t.Context(), &mcp.CallToolParams{Name: "roots_input_each", Arguments: map[string]any{"count": 2}})
	}
	var rounds []*mcp.CallToolResult
	for range 2 {
		res, err := call()
		if err != nil || !res.NeedsInput() || len(res.InputRequests) != 2 {
			t.Fatalf("call: %+v %v; want input_required with 2 roots entries", res, err)
		}
		rounds = append(rounds, res)
	}
	if held := p.admit.Held("peer"); held.InFlight != 4 {
		t.Errorf("%+v held with two rounds of 2 handed out; want 4 in flight", held)
	}
	_, err := call()
	wantLimitError(t, err)
	answers := mcp.InputResponseMap{}
	for key := range rounds[0].InputRequests {
		answers[key] = &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///work"}}}
	}
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "roots_input_each", Arguments: map[string]any{"count": 2},
		RequestState: rounds[0].RequestState, InputResponses: answers})
	if err != nil {
		t.Fatal(err)
	}
	wantTally(t, rootsTally(t, res), 2, 0)
	if held := p.admit.Held("peer"); held.InFlight != 2 {
		t.Errorf("%+v held after one round's retry; want the other round's 2", held)
	}
}

// TestBridgedRootsAdmitted: a legacy upstream's roots/list pushes in a
// 2026-07-28 host's bridged call count against its limits as sampling
// pushes do: of 8 pushed at once, 5 are handed to the host and the other
// 3 refused at once, before the host answers any; once the host has
// answered, the call ends with 5 lists and 3 refusals.
func TestBridgedRootsAdmitted(t *testing.T) {
	log := filepath.Join(t.TempDir(), "outcomes")
	p := newLimitedProxy(t, Limits{HostInFlight: pushLimit}, time.Minute, "peer")
	p.cfg.Upstreams[0].Era = "legacy"
	p.cfg.Upstreams[0].Env["MCPXFW_PEER_LOG"] = log
	var asked atomic.Int32
	host := connectClient(t, p.Proxy, modernEra, rootsHost(&asked, nil, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}))
	params := &mcp.CallToolParams{Name: "roots_each", Arguments: map[string]any{"count": 8}}
	res, err := host.CallTool(t.Context(), params)
	if err != nil || !res.NeedsInput() {
		t.Fatalf("call: %+v %v; want input_required", res, err)
	}
	eventually(t, "3 refusals at the upstream", func() bool { return countRefusals(t, log) == 3 })
	if held := p.admit.Held("peer"); held.InFlight != pushLimit {
		t.Errorf("%+v held with the bridged call's pushes waiting for the host; want %d in flight", held, pushLimit)
	}
	handed := 0
	for res.NeedsInput() {
		answers := mcp.InputResponseMap{}
		for key := range res.InputRequests {
			answers[key] = &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///work"}}}
		}
		handed += len(answers)
		params.RequestState, params.InputResponses = res.RequestState, answers
		if res, err = host.CallTool(t.Context(), params); err != nil {
			t.Fatal(err)
		}
	}
	wantTally(t, rootsTally(t, res), pushLimit, 3)
	if handed != pushLimit {
		t.Errorf("%d roots requests handed to the host, want %d", handed, pushLimit)
	}
}

// countRefusals counts the limit refusals among the outcomes the upstream
// logged.
func countRefusals(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		var o peer.AskOutcome
		if json.Unmarshal([]byte(line), &o) != nil {
			t.Fatalf("outcome %q", line)
		}
		if o.Error == nil || !isLimitRefusal(*o.Error) {
			t.Fatalf("the upstream got %s before the host answered; want only the limit's refusals", line)
		}
		n++
	}
	return n
}

// wantLimitError checks that a host's call failed with the per-host
// limit's -32603.
func wantLimitError(t *testing.T, err error) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !isLimitRefusal(peer.Error{Code: we.Code, Message: we.Message, Data: we.Data}) {
		t.Errorf("call: %v; want -32603 %q, data limit-reached", err, hostLimitReached)
	}
}

// TestEveryKindAdmitted: a push of every kind the firewall relays to a
// host (kinds, so a kind added there is tested too) is admitted on its
// frame, as a command upstream's is, and in the guard's screen, as an HTTP
// upstream's is, however its method is spelt: past the limit the next is
// refused with the limit's -32603 (answered on the upstream's stdin, for
// a frame) and goes no further, and the answer to an admitted one gives
// its place back. An input_required result whose entries of the kind do
// not fit is refused whole.
func TestEveryKindAdmitted(t *testing.T) {
	for _, k := range pipeline.Kinds {
		for _, method := range methodSpellings(k.Method) {
			t.Run(method, func(t *testing.T) {
				a := admit.New(Limits{InFlight: 1}, zap.NewNop(), nil)
				g := guard{screen: passAll, inputs: passAll, held: newPushHolds(),
					admit: func(n int) (*admit.Hold, *jsonrpc.Error) {
						return a.Acquire("s", "h", admit.Claim{InFlight: 1, Bytes: int64(n)})
					},
					admitInputs: func(n int, bytes int64) *jsonrpc.Error {
						return a.Fits("s", "h", admit.Claim{InFlight: n, Bytes: bytes})
					}}
				var replies []string
				f := newFrameScreen(t.Context(), nil, g, nil, func(b []byte) (int, error) {
					replies = append(replies, string(b))
					return len(b), nil
				})
				push := func(id int) []byte {
					return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"%s","params":{}}`, id, method)
				}
				if out := f.admitFrame(push(1)); out == nil || len(replies) != 0 {
					t.Fatalf("the first push was refused on its frame: %q", replies)
				}
				if j := g.screenMessage(t.Context(), decodeFrame(t, push(1))); j.reply != nil {
					t.Fatalf("the first push was refused by the screen: %+v", j.reply.Error)
				}
				if out := f.admitFrame(push(2)); out != nil || len(replies) != 1 || !strings.Contains(replies[0], `"limits.max_in_flight (1) reached for server s"`) {
					t.Errorf("the second push's frame: passed %t, answered %q; want it answered with the limit's refusal", out != nil, replies)
				}
				j := g.screenMessage(t.Context(), decodeFrame(t, push(3)))
				var we *jsonrpc.Error
				if j.reply == nil || !errors.As(j.reply.Error, &we) || we.Code != refusal.CodeInternal || we.Message != "limits.max_in_flight (1) reached for server s" {
					t.Errorf("the screen let a push past the limit through: %+v", j.reply)
				}
				id, _ := jsonrpc.MakeID(float64(1))
				g.held.answered(id)
				if held := a.Held("s"); held != (admit.Claim{}) {
					t.Errorf("%+v held after the admitted push's answer", held)
				}
				// Two entries, one without params, do not fit one place.
				round := fmt.Sprintf(`{"resultType":"input_required","inputRequests":{"a":{"method":"%s","params":{}},"b":{"method":"%s"}},"requestState":"s"}`, method, method)
				j = g.screenMessage(t.Context(), &jsonrpc.Response{ID: id, Result: json.RawMessage(round)})
				if j.replace == nil || !errors.As(j.replace.Error, &we) || we.Message != "limits.max_in_flight (1) reached for server s" {
					t.Error("a round of two entries past the limit was not refused with the limit's -32603")
				}
			})
		}
	}
}

// methodSpellings is method as written plainly, with its slashes escaped,
// and with its first letter a \u escape: a JSON decoder reads all three as
// method.
func methodSpellings(method string) []string {
	return []string{method, strings.ReplaceAll(method, "/", `\/`), fmt.Sprintf(`\u%04x%s`, method[0], method[1:])}
}

// passAll is a screen that refuses nothing.
func passAll(context.Context, *pipeline.Kind, json.RawMessage) *jsonrpc.Error { return nil }

func decodeFrame(t *testing.T, frame []byte) jsonrpc.Message {
	t.Helper()
	msg, err := jsonrpc.DecodeMessage(frame)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// TestKindsListed: every request the firewall can relay to a host (each
// input request type the SDK decodes, each push method it intercepts or
// handles, each kind the engine screens) is of a kind listed in kinds,
// which admission is keyed on: a kind left out of that list would reach
// hosts uncounted.
func TestKindsListed(t *testing.T) {
	for _, in := range []mcp.InputRequest{&mcp.CreateMessageWithToolsParams{}, &mcp.ElicitParams{}, &mcp.ListRootsParams{}} {
		if k := pipeline.Of(in); k == nil || !slices.Contains(pipeline.Kinds, k) {
			t.Errorf("input request %T: kind %v, not listed in kinds", in, k)
		}
	}
	for _, method := range []string{pipeline.MethodCreateMessage, pipeline.MethodElicit, pipeline.MethodListRoots} {
		if pipeline.Relayed(method) == nil {
			t.Errorf("push %s: no kind listed in kinds", method)
		}
	}
	for _, name := range []engine.Kind{engine.KindSampling, engine.KindElicitation, engine.KindRoots} {
		if k := pipeline.Named(name); k == nil || pipeline.Relayed(k.Method) != k {
			t.Errorf("engine kind %s: not listed in kinds under its method", name)
		}
	}
}
