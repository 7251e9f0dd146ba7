package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// serveHTTPTest serves p over HTTP on a loopback port until the test ends
// and returns its MCP URL.
func serveHTTPTest(t *testing.T, p *Proxy) string {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.ServeHTTP(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// connectHTTPHost connects a Go SDK host to url over streamable HTTP.
func connectHTTPHost(t *testing.T, url, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s host: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("host speaks %s, want %s", got, version)
	}
	return cs
}

// answeringHost declares sampling, records the prompt of every request it
// is asked and answers each with "answer from <name>".
func answeringHost(name string, seen *[]string, mu *sync.Mutex) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		CreateMessageWithToolsHandler: func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			var prompt string
			for _, m := range req.Params.Messages {
				for _, c := range m.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						prompt += tc.Text
					}
				}
			}
			mu.Lock()
			*seen = append(*seen, prompt)
			mu.Unlock()
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "model-" + name,
				Content: []mcp.Content{&mcp.TextContent{Text: "answer from " + name}}}, nil
		},
	}
}

func textRequest(text string) string {
	b, _ := json.Marshal(map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}},
		"maxTokens": 10,
	})
	return string(b)
}

// TestHTTPLegacyHostsSampleTheirOwn: two 2025-11-25 hosts on one HTTP
// address at once, each calling the upstream's `sample` tool, in the second
// case several times at once. Every push reaches the host whose call caused
// it, and every call gets its own host's completion.
func TestHTTPLegacyHostsSampleTheirOwn(t *testing.T) {
	tests := []struct {
		name  string
		calls int // per host, all at once
	}{
		{"one call per host", 1},
		{"several calls per host at once", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sampleFromHosts(t, []string{"a", "b"}, tt.calls)
		})
	}
}

// sampleFromHosts connects one legacy HTTP host per name and has each call
// `sample` calls times at once, then checks who was asked what.
func sampleFromHosts(t *testing.T, hosts []string, calls int) {
	p := newTestProxy(t, "peer")
	url := serveHTTPTest(t, p)
	seen := map[string]*[]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range hosts {
		seen[name] = new([]string)
		host := connectHTTPHost(t, url, "2025-11-25", answeringHost(name, seen[name], &mu))
		for i := range calls {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				completion, code := sampleVia(ctx, t, host, "sample", textRequest(fmt.Sprintf("Say hello for host %s, call %d.", name, i)))
				if code != 0 || !strings.Contains(string(completion), "answer from "+name) {
					t.Errorf("host %s call %d: code %d, completion %s", name, i, code, completion)
				}
			})
		}
	}
	wg.Wait()
	for _, name := range hosts {
		if len(*seen[name]) != calls {
			t.Errorf("host %s was asked %d times, want %d: %q", name, len(*seen[name]), calls, *seen[name])
		}
		for _, prompt := range *seen[name] {
			if !strings.Contains(prompt, "for host "+name+",") {
				t.Errorf("host %s was asked another host's request: %q", name, prompt)
			}
		}
	}
}

// sampleVia is sampleThrough for a goroutine and for pushing tools other
// than sample: it reports instead of stopping the test.
func sampleVia(ctx context.Context, t *testing.T, host *mcp.ClientSession, tool, params string) (json.RawMessage, int64) {
	res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"params": json.RawMessage(params)}})
	if err != nil {
		t.Errorf("call: %v", err)
		return nil, -1
	}
	var got peer.SampleOutcome
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Errorf("sample result: %v", err)
		return nil, -1
	}
	if got.Error != nil {
		return json.RawMessage(got.Error.Message), got.Error.Code
	}
	return got.Completion, 0
}

// TestHTTPModernHost: a 2026-07-28 host on the same address is served
// statelessly at its own revision (not downgraded), and an upstream's
// input request makes the round trip through the firewall and the host.
func TestHTTPModernHost(t *testing.T) {
	p := newTestProxy(t, "peer")
	url := serveHTTPTest(t, p)
	var seen []string
	var mu sync.Mutex
	host := connectHTTPHost(t, url, modernEra, answeringHost("modern", &seen, &mu))
	completion, code := sampleThrough(t, host, "sample_input", textRequest("Say hello to the 2026 host."))
	if code != 0 || !strings.Contains(string(completion), "answer from modern") {
		t.Fatalf("code %d, completion %s", code, completion)
	}
	if len(seen) != 1 {
		t.Errorf("host asked %d times, want 1", len(seen))
	}
}

// TestHTTPPaths: the endpoint answers at / and /mcp only.
func TestHTTPPaths(t *testing.T) {
	p := newTestProxy(t, "peer")
	base := strings.TrimSuffix(serveHTTPTest(t, p), "/mcp")
	for _, path := range []string{"/", "/mcp"} {
		connectHTTPHost(t, base+path, "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	}
	_, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/elsewhere", MaxRetries: -1}, nil)
	if err == nil {
		t.Error("a host connected at /elsewhere")
	}
}

// TestListenLoopbackOnly: an address other machines could reach is refused
// unless remote access is allowed; loopback addresses open.
func TestListenLoopbackOnly(t *testing.T) {
	tests := []struct {
		addr        string
		allowRemote bool
		refused     bool
	}{
		{"127.0.0.1:0", false, false},
		{"127.0.0.2:0", false, false},
		{"localhost:0", false, false},
		{"0.0.0.0:0", false, true},
		{":0", false, true},
		{"[::]:0", false, true},
		{"192.0.2.1:8080", false, true},
		{"example.com:8080", false, true},
		{"0.0.0.0:0", true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/allow_remote=%v", tt.addr, tt.allowRemote), func(t *testing.T) {
			ln, err := Listen(tt.addr, tt.allowRemote)
			if ln != nil {
				_ = ln.Close()
			}
			refused := err != nil && strings.Contains(err.Error(), "http.allow_remote: true")
			if refused != tt.refused {
				t.Errorf("Listen(%q, %v) = %v, want refused %v", tt.addr, tt.allowRemote, err, tt.refused)
			}
			if !tt.refused && err != nil {
				t.Errorf("Listen(%q, %v): %v", tt.addr, tt.allowRemote, err)
			}
		})
	}
}

// startHTTPUpstream runs the test upstream in -http mode with extra
// arguments and returns the URL it printed.
func startHTTPUpstream(t *testing.T, args ...string) string {
	t.Helper()
	url, stop, err := peer.StartUpstreamHTTP(testUpstream(t), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// TestHTTPUpstream: a streamable HTTP upstream that requires a header on
// every request. With the header configured, tool calls work and sampling
// does in both eras: a push inside the call (on its response stream) for a
// legacy host, an input request for a 2026-07-28 host. Without the header,
// or with the wrong value, the host's initialize fails.
func TestHTTPUpstream(t *testing.T) {
	good := map[string]string{"X-Peer-Token": "s3cret"}
	tests := []struct {
		name    string
		headers map[string]string
		host    string // protocol revision; "" when connecting must fail
		tool    string
	}{
		{"legacy host", good, "2025-11-25", "sample"},
		{"2026 host", good, modernEra, "sample_input"},
		{"header name in another case", map[string]string{"x-peer-token": "s3cret"}, "2025-11-25", "sample"},
		{"wrong value", map[string]string{"X-Peer-Token": "guess"}, "", ""},
		{"no header", nil, "", ""},
	}
	url := startHTTPUpstream(t, "-require-header", "X-Peer-Token: s3cret")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestProxy(t, "peer")
			p.cfg.Upstreams[0] = defaultOffers(Upstream{Name: "peer", Label: "test peer", URL: url, Headers: tt.headers})
			if tt.host == "" {
				wantConnectFails(t, p)
				return
			}
			var asked []string
			var mu sync.Mutex
			host := connectHost(t, p, tt.host, answeringHost("host", &asked, &mu))
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http"}})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != "over http" {
				t.Fatalf("echo: %v %v", res, err)
			}
			completion, code := sampleThrough(t, host, tt.tool, textRequest("Say hello over HTTP."))
			if code != 0 || !strings.Contains(string(completion), "answer from host") {
				t.Fatalf("%s: code %d, completion %s", tt.tool, code, completion)
			}
		})
	}
}

// TestHTTPUpstreamStandalonePush: an HTTP upstream may push outside any
// request (the TypeScript SDK's server.createMessage does, unless given the
// related request), so the push travels on the standalone GET stream the
// client opens after initialize.
func TestHTTPUpstreamStandalonePush(t *testing.T) {
	url := startHTTPUpstream(t)
	p := newTestProxy(t, "peer")
	p.cfg.Upstreams[0] = defaultOffers(Upstream{Name: "peer", Label: "test peer", URL: url})
	var asked []string
	var mu sync.Mutex
	host := connectHost(t, p, "2025-11-25", answeringHost("host", &asked, &mu))
	completion, code := sampleVia(t.Context(), t, host, "sample_standalone", textRequest("Say hello on the standalone stream."))
	if code != 0 || !strings.Contains(string(completion), "answer from host") {
		t.Fatalf("code %d, completion %s", code, completion)
	}
}

// wantConnectFails connects an in-memory host and expects its initialize
// to succeed and its calls to the server the firewall could not start to
// be refused, naming it down.
func wantConnectFails(t *testing.T, p *Proxy) {
	t.Helper()
	host := connectHost(t, p, "2025-11-25", nil)
	_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "upstream peer is down since") {
		t.Errorf("a call to a server the firewall could not start: %v; want it refused, naming the server down", err)
	}
}
