package relay

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// inputPolicy is the test's own server package for the peer, beside the
// shipped composition (main.rego): elicitations are decided by their
// message, roots by their list, everything else passes. The rules read
// only the request and result documents, which say what they are.
const inputPolicy = `package mcpxfw.servers.peer

deny contains {"code": "test-deny", "message": "the test denies it"} if {
	input.request.message == "deny me"
}

review contains {"code": "test-review", "message": "the test holds it"} if {
	input.stage == "request"
	input.request.message == "review me"
}

# At both stages: an approval at the first must cover the second.
review contains {"code": "test-review-always", "message": "the test holds it at every stage"} if {
	input.request.message == "review always"
}

# A new reason at the result stage still holds an approved request.
review contains {"code": "test-review-answer", "message": "the test holds this answer"} if {
	input.stage == "result"
	input.result.content.name == "Mallory"
}

# The code "review always" holds, at the result stage only, for another
# answer: an approval of one request must not cover another's answer.
review contains {"code": "test-review-always", "message": "the test holds this answer"} if {
	input.stage == "result"
	input.result.content.name == "Eve"
}

deny contains {"code": "test-deny-roots", "message": "the test denies this list"} if {
	some r in input.result.roots
	contains(r.uri, "forbidden")
}

permit := true
`

// newInputProxy is a proxy over the shipped composition and inputPolicy,
// with one test upstream, "peer", that speaks protocol ("" follows the
// host, "legacy", or a revision).
func newInputProxy(t *testing.T, protocol string, mutate ...func(*Upstream)) *Proxy {
	t.Helper()
	return newInputProxyWith(t, inputSetup{protocol: protocol}, mutate...)
}

// inputSetup is what newInputProxyWith varies.
type inputSetup struct {
	protocol      string
	reviewTimeout time.Duration // default a minute
	limits        Limits
}

func newInputProxyWith(t *testing.T, set inputSetup, mutate ...func(*Upstream)) *Proxy {
	t.Helper()
	dir := t.TempDir()
	main, err := os.ReadFile("../policies/mcpxfw/main.rego")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"mcpxfw/main.rego": string(main), "servers/peer.rego": inputPolicy} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	store.PollInterval = 20 * time.Millisecond
	eng, err := engine.New(t.Context(), engine.Config{
		Policy: engine.PolicyConfig{Dir: dir, Timeout: time.Second, Data: map[string]any{"default": "review",
			"servers": map[string]any{"peer": map[string]any{"label": "test peer", "max_tokens": 1000}}}},
		ReviewTimeout: cmp.Or(set.reviewTimeout, time.Minute),
	}, store, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	u := Upstream{Name: "peer", Label: "test peer", Command: []string{testUpstream(t)}, Era: set.protocol, Sampling: true,
		Elicitation: ElicitationConfig{Enabled: true}, Roots: RootsConfig{Enabled: true}}
	for _, m := range mutate {
		m(&u)
	}
	return New(Config{Upstreams: []Upstream{u}, HostTimeout: 10 * time.Second, Limits: set.limits}, eng, store, zap.NewNop())
}

// inputHost is a host that declares elicitation (form and url) and roots,
// and answers both itself, in either era: pushes are taken by receiving
// middleware and a 2026-07-28 host's input requests by its own retry loop
// (call), so that the SDK's client never checks a schema by its rules.
type inputHost struct {
	// answer is the user's answer to an elicitation; nil accepts with
	// {"name": "Ada"}.
	answer func(*mcp.ElicitParams) *mcp.ElicitResult
	roots  []*mcp.Root

	elicited, rootsAsked atomic.Int32
	mu                   sync.Mutex
	seen                 []json.RawMessage // the elicitations as they reached the host
}

func (h *inputHost) elicit(p *mcp.ElicitParams) *mcp.ElicitResult {
	h.elicited.Add(1)
	raw, _ := json.Marshal(p)
	h.mu.Lock()
	h.seen = append(h.seen, raw)
	h.mu.Unlock()
	if h.answer != nil {
		return h.answer(p)
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}
}

func (h *inputHost) listRoots() *mcp.ListRootsResult {
	h.rootsAsked.Add(1)
	return &mcp.ListRootsResult{Roots: h.roots}
}

// connect connects h to p at version.
func (h *inputHost) connect(t *testing.T, p *Proxy, version string) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "elicitation/create":
				return h.elicit(req.(*mcp.ElicitRequest).Params), nil
			case "roots/list":
				return h.listRoots(), nil
			}
			return next(ctx, method, req)
		}
	})
	return connectClient(t, p, version, client)
}

// call calls tool, answering the firewall's input requests the way a
// 2026-07-28 host does, until the call has its result.
func (h *inputHost) call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	return h.callWith(ctx, cs, tool, args, nil)
}

// callWith is call with answers sent, unasked, on the first attempt.
func (h *inputHost) callWith(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, answers mcp.InputResponseMap) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: tool, Arguments: args, InputResponses: answers}
	for range 8 {
		res, err := cs.CallTool(ctx, params)
		if err != nil || !res.NeedsInput() {
			return res, err
		}
		answers := mcp.InputResponseMap{}
		for key, in := range res.InputRequests {
			switch r := in.(type) {
			case *mcp.ElicitParams:
				answers[key] = h.elicit(r)
			case *mcp.ListRootsParams:
				answers[key] = h.listRoots()
			}
		}
		params = &mcp.CallToolParams{Name: tool, Arguments: args, InputResponses: answers, RequestState: res.RequestState}
	}
	return nil, errors.New("too many rounds")
}

// askThrough asks, through the firewall, for method with params by the
// peer's tool (ask: a push; ask_input: an input request), and reads what
// the upstream got: an answer, or the code of the error it got or the
// host's call failed with.
func (h *inputHost) askThrough(t *testing.T, cs *mcp.ClientSession, tool, method, params string) (json.RawMessage, int64) {
	t.Helper()
	res, err := h.call(t.Context(), cs, tool, map[string]any{"method": method, "params": json.RawMessage(params)})
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Fatalf("call failed without a JSON-RPC error: %v", err)
		}
		return nil, we.Code
	}
	var got peer.AskOutcome
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	if got.Error != nil {
		t.Logf("upstream error: %d %s %s", got.Error.Code, got.Error.Message, got.Error.Data)
		return nil, got.Error.Code
	}
	return got.Result, 0
}

// refusedWith reads the code a tool call through the firewall was refused
// with: the host's call's own JSON-RPC error (an input request's
// refusal), or the error the upstream reports in the tool's result (a
// push's); 0 when it was answered.
func refusedWith(t *testing.T, res *mcp.CallToolResult, err error) int64 {
	t.Helper()
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we):
		return we.Code
	case err != nil:
		t.Fatal(err)
	}
	var got struct {
		Error *peer.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	if got.Error != nil {
		return got.Error.Code
	}
	return 0
}

// inputCells are the four pairings of a host's and an upstream's era: the
// peer's tool that asks, and the protocol it is made to speak.
var inputCells = []struct {
	name, host, protocol, tool string
}{
	{"legacy-upstream/legacy-host", "2025-11-25", "legacy", "ask"},
	{"2026-upstream/legacy-host", "2025-11-25", modernEra, "ask_input"},
	{"2026-upstream/2026-host", modernEra, "", "ask_input"},
	{"legacy-upstream/2026-host", modernEra, "legacy", "ask"}, // through the bridge
}

const nameSchema = `{"type":"object","properties":{"name":{"type":"string","maxLength":20}},"required":["name"]}`

// sep1330Schema is the Go SDK everything-server's test_elicitation_sep1330_enums
// schema: the SDK's own client check refuses its titled multi-select
// (items of type string with anyOf and no enum).
const sep1330Schema = `{"type":"object","properties":{
 "untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
 "titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]},
 "legacyEnum":{"type":"string","enum":["opt1","opt2"],"enumNames":["Option One","Option Two"]},
 "untitledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
 "titledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","anyOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]}}}}`

// TestElicitationEraMatrix runs elicitations through every pairing of a
// host's and an upstream's era, each outcome of the wire table
// (refusal.ForVerdict): what reaches the upstream, and whether the host was asked.
func TestElicitationEraMatrix(t *testing.T) {
	cases := []struct {
		name   string
		params string
		answer func(*mcp.ElicitParams) *mcp.ElicitResult
		// action is what a legacy upstream gets as a result ("": an error
		// of code legacyCode); modernCode fails a 2026-07-28 upstream's
		// call (0: it gets an answer).
		action                 string
		legacyCode, modernCode int64
		want                   string // in the answer the upstream got
		hostAsked, approve     bool
	}{
		{name: "permit", params: `{"message":"hello","requestedSchema":` + nameSchema + `}`,
			action: "accept", want: `"name":"Ada"`, hostAsked: true},
		{name: "deny", params: `{"message":"deny me","requestedSchema":` + nameSchema + `}`,
			action: "decline", modernCode: refusal.CodeUserRejected},
		{name: "invalid", params: `{"message":"nested","requestedSchema":{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}}`,
			legacyCode: refusal.CodeInvalidParams, modernCode: refusal.CodeInvalidParams},
		{name: "escalated then approved", params: `{"message":"review me","requestedSchema":` + nameSchema + `}`,
			action: "accept", want: `"name":"Ada"`, hostAsked: true, approve: true},
		{name: "answer breaks the schema", params: `{"message":"hello","requestedSchema":` + nameSchema + `}`,
			answer: func(*mcp.ElicitParams) *mcp.ElicitResult {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": strings.Repeat("x", 40), "extra": "leak"}}
			}, legacyCode: refusal.CodeInternal, modernCode: refusal.CodeInternal, hostAsked: true},
		{name: "host declines", params: `{"message":"hello","requestedSchema":` + nameSchema + `}`,
			answer: func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} },
			action: "decline", want: `"action":"decline"`, hostAsked: true},
		{name: "url mode", params: `{"mode":"url","message":"Sign in","url":"https://auth.example.com/login","elicitationId":"el-1"}`,
			answer: func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "accept"} },
			action: "accept", want: `"action":"accept"`, hostAsked: true},
		{name: "sep-1330 enums", params: `{"message":"pick","requestedSchema":` + sep1330Schema + `}`,
			answer: func(*mcp.ElicitParams) *mcp.ElicitResult {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"titledSingle": "value2", "titledMulti": []any{"value1", "value2"}}}
			}, action: "accept", want: `"titledMulti":["value1","value2"]`, hostAsked: true},
	}
	for _, cell := range inputCells {
		for _, tc := range cases {
			t.Run(cell.name+"/"+tc.name, func(t *testing.T) {
				p := newInputProxy(t, cell.protocol)
				h := &inputHost{answer: tc.answer}
				cs := h.connect(t, p, cell.host)
				stop := func() {}
				if tc.approve {
					stop = approveFirst(t, p.store)
				}
				got, code := h.askThrough(t, cs, cell.tool, "elicitation/create", tc.params)
				stop()
				wantCode := tc.modernCode
				if cell.tool == "ask" {
					wantCode = tc.legacyCode
				}
				if code != wantCode {
					t.Fatalf("upstream got %s (code %d), want code %d", got, code, wantCode)
				}
				if cell.tool == "ask" && tc.action != "" {
					var res mcp.ElicitResult
					if json.Unmarshal(got, &res) != nil || res.Action != tc.action {
						t.Fatalf("upstream got %s, want action %q", got, tc.action)
					}
				}
				if tc.want != "" && code == 0 && !strings.Contains(string(got), tc.want) {
					t.Errorf("upstream got %s, want %s in it", got, tc.want)
				}
				if tc.name == "answer breaks the schema" && strings.Contains(string(got), "leak") {
					t.Errorf("the upstream got the answer that breaks the schema: %s", got)
				}
				if asked := h.elicited.Load() > 0; asked != tc.hostAsked {
					t.Errorf("host asked = %v, want %v", asked, tc.hostAsked)
				}
				for _, seen := range h.seen {
					if strings.Contains(tc.params, "requestedSchema") && !strings.Contains(string(seen), `"requestedSchema":{`) {
						t.Errorf("the host got the elicitation without its schema: %s", seen)
					}
				}
			})
		}
	}
}

// TestElicitationExpiry: nobody chose. A legacy upstream's elicitation is
// cancelled; a 2026-07-28 upstream's call fails with -32603 naming the
// expiry, and is not retried. The host is never asked.
func TestElicitationExpiry(t *testing.T) {
	for _, cell := range inputCells {
		t.Run(cell.name, func(t *testing.T) {
			p := newInputProxyWith(t, inputSetup{protocol: cell.protocol, reviewTimeout: 300 * time.Millisecond})
			h := &inputHost{}
			cs := h.connect(t, p, cell.host)
			got, code := h.askThrough(t, cs, cell.tool, "elicitation/create", `{"message":"review me","requestedSchema":`+nameSchema+`}`)
			switch {
			case cell.tool == "ask" && (code != 0 || string(got) != `{"action":"cancel"}`):
				t.Fatalf("upstream got %s (code %d), want {\"action\":\"cancel\"}", got, code)
			case cell.tool != "ask" && code != refusal.CodeInternal:
				t.Fatalf("code = %d, want -32603", code)
			}
			if h.elicited.Load() != 0 {
				t.Error("the host was asked")
			}
		})
	}
}

// TestApprovalNotAskedTwice: an elicitation a person approved is not held
// again at the result stage for a reason whose code they approved; a new
// reason (here, in the answer) still holds it, and rejecting it then
// declines (legacy upstream) or fails the call with -1 (2026-07-28).
func TestApprovalNotAskedTwice(t *testing.T) {
	for _, cell := range inputCells {
		for _, tc := range []struct {
			name    string
			answer  string // the name the user gives
			reviews int    // reviews opened
		}{{"same reason", "Ada", 1}, {"new reason", "Mallory", 2}} {
			t.Run(cell.name+"/"+tc.name, func(t *testing.T) {
				// A hold nobody approves expires in seconds, not a minute.
				p := newInputProxyWith(t, inputSetup{protocol: cell.protocol, reviewTimeout: 5 * time.Second})
				h := &inputHost{answer: func(*mcp.ElicitParams) *mcp.ElicitResult {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": tc.answer}}
				}}
				cs := h.connect(t, p, cell.host)
				decided := make(chan struct{})
				go func() {
					defer close(decided)
					first := pendingID(t, p.store)
					if _, err := p.store.Approve(context.Background(), first, "alice", ""); err != nil {
						t.Error(err)
						return
					}
					if tc.reviews == 1 {
						return
					}
					second := pendingIDOtherThan(t, p.store, first)
					if _, err := p.store.Reject(context.Background(), second, "alice", "not that name"); err != nil {
						t.Error(err)
					}
				}()
				got, code := h.askThrough(t, cs, cell.tool, "elicitation/create", `{"message":"review always","requestedSchema":`+nameSchema+`}`)
				<-decided
				switch {
				case tc.reviews == 1 && (code != 0 || !strings.Contains(string(got), `"name":"Ada"`)):
					t.Fatalf("upstream got %s (code %d), want the accepted answer", got, code)
				case tc.reviews == 2 && cell.tool == "ask" && (code != 0 || string(got) != `{"action":"decline"}`):
					t.Fatalf("upstream got %s (code %d), want a decline", got, code)
				case tc.reviews == 2 && cell.tool != "ask" && code != refusal.CodeUserRejected:
					t.Fatalf("code = %d, want -1", code)
				}
				items, err := p.store.List(t.Context(), review.Filter{All: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(items) != tc.reviews {
					t.Errorf("%d reviews opened, want %d", len(items), tc.reviews)
				}
			})
		}
	}
}

// approveFirst approves the first review to be opened, as alice, from
// another goroutine; the returned stop ends its wait and waits for it.
func approveFirst(t *testing.T, s *review.Store) (stop func()) {
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			items, err := s.List(context.Background(), review.Filter{})
			if err != nil {
				t.Error(err)
				return
			}
			if len(items) > 0 {
				if _, err := s.Approve(context.Background(), items[0].ID, "alice", ""); err != nil {
					t.Error(err)
				}
				return
			}
			select {
			case <-quit:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// pendingIDOtherThan waits for a pending review other than id.
func pendingIDOtherThan(t *testing.T, s *review.Store, id string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		items, err := s.List(t.Context(), review.Filter{})
		if err != nil {
			t.Error(err)
			return ""
		}
		for _, it := range items {
			if it.ID != id {
				return it.ID
			}
		}
	}
	t.Error("no second pending review")
	return ""
}

// TestRootsEraMatrix: an upstream's roots request gets the host's list,
// narrowed to servers.<name>.roots.allow, after the policy saw it, in
// every pairing of eras; a list the policy denies is refused (-1).
func TestRootsEraMatrix(t *testing.T) {
	roots := []*mcp.Root{{URI: "file:///work/a", Name: "a"}, {URI: "file:///work/a/src"}, {URI: "file:///work/a-secrets"}, {URI: "file:///other"}}
	for _, cell := range inputCells {
		for _, tc := range []struct {
			name      string
			roots     []*mcp.Root
			cfg       RootsConfig
			code      int64
			want      []string
			hostAsked bool
		}{
			{"unchanged", roots, RootsConfig{Enabled: true}, 0, []string{"file:///work/a", "file:///work/a/src", "file:///work/a-secrets", "file:///other"}, true},
			{"narrowed", roots, RootsConfig{Enabled: true, Allow: []string{"file:///work/a"}}, 0, []string{"file:///work/a", "file:///work/a/src"}, true},
			{"denied", append(roots, &mcp.Root{URI: "file:///forbidden"}), RootsConfig{Enabled: true}, refusal.CodeUserRejected, nil, true},
		} {
			t.Run(cell.name+"/"+tc.name, func(t *testing.T) {
				p := newInputProxy(t, cell.protocol, func(u *Upstream) { u.Roots = tc.cfg })
				h := &inputHost{roots: tc.roots}
				cs := h.connect(t, p, cell.host)
				got, code := h.askThrough(t, cs, cell.tool, "roots/list", `{}`)
				if code != tc.code {
					t.Fatalf("upstream got %s (code %d), want code %d", got, code, tc.code)
				}
				if code == 0 {
					var res mcp.ListRootsResult
					if err := json.Unmarshal(got, &res); err != nil {
						t.Fatal(err)
					}
					var uris []string
					for _, r := range res.Roots {
						uris = append(uris, r.URI)
					}
					if strings.Join(uris, " ") != strings.Join(tc.want, " ") {
						t.Errorf("upstream got roots %v, want %v", uris, tc.want)
					}
				}
				if asked := h.rootsAsked.Load() > 0; asked != tc.hostAsked {
					t.Errorf("host asked = %v, want %v", asked, tc.hostAsked)
				}
			})
		}
	}
}

// TestElicitationScreenedOnBytes: an elicitation whose bytes say two
// things (a repeated key, which a decoder collapses to one) is refused
// with -32602 on the bytes the upstream sent, before anything decodes it,
// pushed or as an input request, and the host never sees it.
func TestElicitationScreenedOnBytes(t *testing.T) {
	raw := `{"mode":"form","message":"Your name?","message":"Your password?","requestedSchema":` + nameSchema + `}`
	for _, cell := range inputCells {
		t.Run(cell.name, func(t *testing.T) {
			p := newInputProxy(t, cell.protocol)
			h := &inputHost{}
			cs := h.connect(t, p, cell.host)
			res, err := h.call(t.Context(), cs, cell.tool, map[string]any{"method": "elicitation/create", "raw_b64": base64.StdEncoding.EncodeToString([]byte(raw))})
			code := refusedWith(t, res, err)
			if code != refusal.CodeInvalidParams {
				t.Fatalf("code = %d, want -32602", code)
			}
			if h.elicited.Load() != 0 {
				t.Error("the host was asked")
			}
		})
	}
}

// TestHTTPUpstreamElicitationScreened: the same over a streamable HTTP
// upstream (screeningTransport), a push inside a call for a legacy host
// and an input request for a 2026-07-28 host.
func TestHTTPUpstreamElicitationScreened(t *testing.T) {
	url := startHTTPUpstream(t)
	raw := `{"mode":"form","message":"Your name?","message":"Your password?","requestedSchema":` + nameSchema + `}`
	for _, tc := range []struct{ host, tool string }{{"2025-11-25", "ask"}, {modernEra, "ask_input"}} {
		t.Run(tc.host, func(t *testing.T) {
			p := newInputProxy(t, "", func(u *Upstream) { u.Command, u.URL = nil, url })
			h := &inputHost{}
			cs := h.connect(t, p, tc.host)
			res, err := h.call(t.Context(), cs, tc.tool, map[string]any{"method": "elicitation/create", "raw_b64": base64.StdEncoding.EncodeToString([]byte(raw))})
			code := refusedWith(t, res, err)
			if code != refusal.CodeInvalidParams || h.elicited.Load() != 0 {
				t.Fatalf("code = %d, host asked %d times; want -32602 and never", code, h.elicited.Load())
			}
		})
	}
}

// TestElicitationLimits: elicitations count against a server's limits as
// sampling does: with one request in flight allowed, an elicitation held
// for review leaves none for the next, which is refused at once with
// -32603 naming the limit, without asking the host or the engine.
func TestElicitationLimits(t *testing.T) {
	for _, cell := range inputCells {
		t.Run(cell.name, func(t *testing.T) {
			p := newInputProxyWith(t, inputSetup{protocol: cell.protocol, limits: Limits{InFlight: 1}})
			h := &inputHost{}
			cs := h.connect(t, p, cell.host)
			held := make(chan int64, 1)
			go func() {
				_, code := h.askThrough(t, cs, cell.tool, "elicitation/create", `{"message":"review me","requestedSchema":`+nameSchema+`}`)
				held <- code
			}()
			eventually(t, "a pending review", func() bool { return len(pending(t, p)) == 1 })
			_, code := h.askThrough(t, cs, cell.tool, "elicitation/create", `{"message":"hello","requestedSchema":`+nameSchema+`}`)
			if code != refusal.CodeInternal || p.admit.Refusals("peer", "limits.max_in_flight") == 0 {
				t.Errorf("code = %d (%d refusals), want -32603 from limits.max_in_flight", code, p.admit.Refusals("peer", "limits.max_in_flight"))
			}
			if _, err := p.store.Reject(t.Context(), pending(t, p)[0].ID, "test", ""); err != nil {
				t.Fatal(err)
			}
			<-held
			if h.elicited.Load() != 0 {
				t.Error("the host was asked")
			}
			eventually(t, "every hold released", func() bool { return p.admit.Held("peer") == admit.Claim{} })
		})
	}
}

// TestSDKRefusesSEP1330: why the firewall takes elicitations from the
// SDK's hands on both sides. A client with an ElicitationHandler refuses
// the SEP-1330 titled multi-select before its handler runs, and
// ServerSession.Elicit refuses the host's valid answer to it; through the
// firewall the same schema and answer pass (TestElicitationEraMatrix,
// "sep-1330 enums"). Should the SDK change, this test says the
// interception may go.
func TestSDKRefusesSEP1330(t *testing.T) {
	var handled atomic.Int32
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	var elicitErr error
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, elicitErr = req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "pick", RequestedSchema: json.RawMessage(sep1330Schema)})
		return &mcp.CallToolResult{}, nil
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			handled.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"titledMulti": []any{"value1"}}}, nil
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask"}); err != nil {
		t.Fatal(err)
	}
	if elicitErr == nil || handled.Load() != 0 {
		t.Errorf("the SDK's client let the SEP-1330 schema through (err %v, handler ran %d times)", elicitErr, handled.Load())
	}
	// A host that answers it (here by middleware, before the SDK's check):
	// ServerSession.Elicit refuses the valid answer.
	host := mcp.NewClient(&mcp.Implementation{Name: "h", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}})
	host.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "elicitation/create" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"titledMulti": []any{"value1"}}}, nil
			}
			return next(ctx, method, req)
		}
	})
	ct, st = mcp.NewInMemoryTransports()
	ss2, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss2.Close()
	hs, err := host.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	elicitErr = nil
	if _, err := hs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask"}); err != nil {
		t.Fatal(err)
	}
	if elicitErr == nil {
		t.Error("ServerSession.Elicit accepted the answer to a SEP-1330 schema")
	}
}

// TestElicitationEditedByOperator: an operator who approves an
// elicitation with an edit (an ElicitParams) has the host see the edit,
// and the upstream gets the answer to it.
func TestElicitationEditedByOperator(t *testing.T) {
	for _, cell := range inputCells {
		t.Run(cell.name, func(t *testing.T) {
			p := newInputProxy(t, cell.protocol)
			h := &inputHost{}
			cs := h.connect(t, p, cell.host)
			done := make(chan struct{})
			go func() {
				defer close(done)
				edit := review.Edit{Value: json.RawMessage(`{"message":"Your first name?","requestedSchema":` + nameSchema + `}`)}
				if _, err := p.store.ApproveEdited(context.Background(), pendingID(t, p.store), "alice", "", edit); err != nil {
					t.Error(err)
				}
			}()
			got, code := h.askThrough(t, cs, cell.tool, "elicitation/create", `{"message":"review me","requestedSchema":`+nameSchema+`}`)
			<-done
			if code != 0 || !strings.Contains(string(got), `"name":"Ada"`) {
				t.Fatalf("upstream got %s (code %d), want the answer", got, code)
			}
			if len(h.seen) != 1 || !strings.Contains(string(h.seen[0]), `"message":"Your first name?"`) || !strings.Contains(string(h.seen[0]), `"mode":"form"`) {
				t.Errorf("the host saw %s, want the operator's edit", h.seen)
			}
		})
	}
}

// TestPeerHostAnswersInputs: the project's test host (peer.Host, here
// over HTTP) answers elicitations and roots pushed through the firewall,
// the SEP-1330 schema included, so end-to-end tests can drive them.
func TestPeerHostAnswersInputs(t *testing.T) {
	p := newInputProxy(t, "legacy")
	url := serveHTTPTest(t, p)
	host, err := peer.ConnectHTTP(t.Context(), url, peer.HostOptions{
		Elicit: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"action":"accept","content":{"titledMulti":["value1"]}}`), nil
		},
		Roots: []string{"file:///work/a"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Close() })
	for _, tc := range []struct{ method, params, want string }{
		{"elicitation/create", `{"message":"pick","requestedSchema":` + sep1330Schema + `}`, `"titledMulti":["value1"]`},
		{"roots/list", `{}`, `"uri":"file:///work/a"`},
	} {
		res, err := host.CallTool(t.Context(), "ask", map[string]any{"method": tc.method, "params": json.RawMessage(tc.params)})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Text, tc.want) {
			t.Errorf("%s: upstream got %s, want %s in it", tc.method, res.Text, tc.want)
		}
	}
	select {
	case <-host.Elicited:
	default:
		t.Error("the host saw no elicitation")
	}
}
