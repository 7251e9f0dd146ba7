package relay

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// urlHost is a legacy host over HTTP declaring both elicitation modes; the
// ids of the completions it is told arrive on its channel.
func urlHost(t *testing.T, url string) (*mcp.ClientSession, chan string) {
	completed := make(chan string, 16)
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	}
	return connectHTTPHost(t, url, "2025-11-25", opts), completed
}

// wantURLRequired calls url_required for ids and checks the host gets the
// upstream's -32042 as it sent it, its elicitations intact.
func wantURLRequired(t *testing.T, host *mcp.ClientSession, ids ...string) {
	t.Helper()
	_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "url_required", Arguments: map[string]any{"ids": ids}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("err = %v, want -32042", err)
	}
	var data struct {
		Elicitations []mcp.ElicitParams `json:"elicitations"`
	}
	if err := json.Unmarshal(we.Data, &data); err != nil || len(data.Elicitations) != len(ids) {
		t.Fatalf("data = %s, want the %d elicitations the upstream named", we.Data, len(ids))
	}
	for i, el := range data.Elicitations {
		if el.Mode != "url" || el.ElicitationID != ids[i] || el.URL != "https://auth.example.com/start/"+ids[i] {
			t.Errorf("elicitation %d = %+v, not as the upstream sent it", i, el)
		}
	}
}

// complete makes host's upstream send notifications/elicitation/complete
// for each id, in order.
func complete(t *testing.T, host *mcp.ClientSession, ids ...string) {
	t.Helper()
	var params []json.RawMessage
	for _, id := range ids {
		b, _ := json.Marshal(map[string]string{"elicitationId": id})
		params = append(params, b)
	}
	if _, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "notify_raw",
		Arguments: map[string]any{"method": "notifications/elicitation/complete", "params": params}}); err != nil {
		t.Fatal(err)
	}
}

// allowAuthHost lets a server's URL elicitations to auth.example.com pass
// without review (servers.<name>.elicitation.allowed_hosts).
func allowAuthHost(server map[string]any) {
	server["elicitation"] = map[string]any{"allowed_hosts": []any{"auth.example.com"}}
}

// nextCompleted is the next completion host was told of.
func nextCompleted(t *testing.T, completed chan string) string {
	t.Helper()
	select {
	case id := <-completed:
		return id
	case <-time.After(20 * time.Second):
		t.Fatal("no completion reached the host")
		return ""
	}
}

// TestURLElicitationCompleteRouting: with two hosts over HTTP, each
// upstream's notifications/elicitation/complete reaches its own host, and
// only for an id that host was handed (here by -32042) through that
// upstream, once: another host's id, an unknown one and a repeat are
// dropped. An upstream's completions are relayed in the order it sent
// them, so the first one a host is told of shows what came before it.
func TestURLElicitationCompleteRouting(t *testing.T) {
	p := newTestProxyConfig(t, allowAuthHost, "peer")
	url := serveHTTPTest(t, p)
	hostA, completedA := urlHost(t, url)
	hostB, completedB := urlHost(t, url)
	wantURLRequired(t, hostA, "a1")
	wantURLRequired(t, hostB, "b1")

	complete(t, hostA, "b1", "unknown", "a1")
	if id := nextCompleted(t, completedA); id != "a1" {
		t.Errorf("host A was told %q first, want a1", id)
	}
	complete(t, hostB, "a1", "b1")
	if id := nextCompleted(t, completedB); id != "b1" {
		t.Errorf("host B was told %q first, want b1", id)
	}
	wantURLRequired(t, hostA, "a2")
	complete(t, hostA, "a1", "a2") // a1 again: already completed
	if id := nextCompleted(t, completedA); id != "a2" {
		t.Errorf("host A was told %q, want a2", id)
	}
	select {
	case id := <-completedA:
		t.Errorf("host A was also told %q", id)
	case id := <-completedB:
		t.Errorf("host B was also told %q", id)
	default:
	}
}

// TestURLElicitationRequiredNotOffered: a -32042 from an upstream that was
// not offered URL-mode elicitation (the host declared form only, or the
// config withholds elicitation) never sends the host to its URLs: the call
// fails with the firewall's -32602 instead.
func TestURLElicitationRequiredNotOffered(t *testing.T) {
	for _, tc := range []struct {
		name    string
		caps    *mcp.ElicitationCapabilities
		enabled bool
	}{
		{"host declared form only", &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}, true},
		{"config withholds elicitation", &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestProxy(t, "peer")
			p.cfg.Upstreams[0].Elicitation.Enabled = tc.enabled
			host := connectHost(t, p, "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Elicitation: tc.caps}})
			_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "url_required", Arguments: map[string]any{"ids": []string{"x"}}})
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("err = %v, want -32602 not offered", err)
			}
			if strings.Contains(string(we.Data), "auth.example.com") || strings.Contains(we.Message, "auth.example.com") {
				t.Errorf("the host was shown the upstream's URL: %s %s", we.Message, we.Data)
			}
		})
	}
}

// TestURLElicitationRequiredDecided: the elicitations of an upstream's
// -32042 are decided as any URL-mode elicitation before the host may open
// one: an http:// URL or one with userinfo is denied, and then the host's
// call fails with -1 showing none of the URLs, even those that passed; a
// -32042 without elicitations, or with a member an elicitation does not
// have, is malformed (-32602); an allowed host passes, the error rebuilt
// from the cleared params alone (the upstream's other members dropped); a
// punycode host is held for review and
// passes once approved. For a legacy host, a 2026-07-28 one, and a
// 2026-07-28 one calling a legacy upstream through the bridge.
func TestURLElicitationRequiredDecided(t *testing.T) {
	const punycode = "https://xn--80ak6aa92e.com/start"
	for _, cell := range []struct{ host, protocol string }{{"2025-11-25", ""}, {modernEra, ""}, {modernEra, "legacy"}} {
		for _, tc := range []struct {
			name    string
			args    map[string]any
			code    int64
			want    string // the data the host gets with -32042
			approve bool
		}{
			{name: "http", args: map[string]any{"ids": []string{"x"}, "urls": []string{"http://auth.example.com/start/x"}}, code: refusal.CodeUserRejected},
			{name: "userinfo", args: map[string]any{"ids": []string{"x"}, "urls": []string{"https://bank.example@auth.example.com/x"}}, code: refusal.CodeUserRejected},
			{name: "one of two denied", args: map[string]any{"ids": []string{"a", "b"}, "urls": []string{"https://auth.example.com/start/a", "http://auth.example.com/start/b"}}, code: refusal.CodeUserRejected},
			{name: "unknown member", args: map[string]any{"data_b64": base64.StdEncoding.EncodeToString([]byte(
				`{"elicitations":[{"mode":"url","message":"Sign in","url":"https://auth.example.com/start/u","elicitationId":"u","next":"http://evil.example/"}]}`))}, code: refusal.CodeInvalidParams},
			{name: "no elicitations", args: map[string]any{"data_b64": base64.StdEncoding.EncodeToString([]byte(`{"elicitations":[],"url":"https://auth.example.com/x"}`))}, code: refusal.CodeInvalidParams},
			{name: "allowed host, rebuilt", args: map[string]any{"data_b64": base64.StdEncoding.EncodeToString([]byte(
				`{"elicitations":[{"mode":"url","message":"Sign in","url":"https://auth.example.com/start/r","elicitationId":"r"}],"next":"http://evil.example/"}`))},
				code: mcp.CodeURLElicitationRequired, want: `{"elicitations":[{"mode":"url","message":"Sign in","url":"https://auth.example.com/start/r","elicitationId":"r"}]}`},
			{name: "punycode host approved", args: map[string]any{"ids": []string{"p"}, "urls": []string{punycode}}, approve: true,
				code: mcp.CodeURLElicitationRequired, want: `{"elicitations":[{"mode":"url","message":"Sign in to continue.","url":"` + punycode + `","elicitationId":"p"}]}`},
		} {
			t.Run(cell.host+"/"+cmp.Or(cell.protocol, "same era")+"/"+tc.name, func(t *testing.T) {
				p := newTestProxyConfig(t, allowAuthHost, "peer")
				p.cfg.Upstreams[0].Era = cell.protocol
				cs := connectHost(t, p, cell.host, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
					Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}})
				stop := func() {}
				if tc.approve {
					stop = approveFirst(t, p.store)
				}
				_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "url_required", Arguments: tc.args})
				stop()
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != tc.code {
					t.Fatalf("err = %v, want code %d", err, tc.code)
				}
				if tc.want != "" && string(we.Data) != tc.want {
					t.Errorf("data = %s, want %s", we.Data, tc.want)
				}
				if tc.want == "" && (strings.Contains(string(we.Data)+we.Message, "example")) {
					t.Errorf("the host was shown a URL: %s %s", we.Message, we.Data)
				}
				items, err := p.store.List(t.Context(), review.Filter{All: true})
				if err != nil {
					t.Fatal(err)
				}
				if tc.approve != (len(items) == 1) {
					t.Errorf("%d reviews opened, want one only when approved", len(items))
				}
			})
		}
	}
}
