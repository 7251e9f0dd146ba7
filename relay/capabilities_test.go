package relay

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestUpstreamFollowsHost: each upstream session is opened at the host's
// protocol version, and is offered sampling (and its tools/context
// sub-capabilities) only when the host declared them.
func TestUpstreamFollowsHost(t *testing.T) {
	answer := func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	cases := []struct {
		version  string
		sampling *mcp.SamplingCapabilities
		wantCaps string
	}{
		{"2024-11-05", nil, `{}`},
		{"2025-03-26", &mcp.SamplingCapabilities{}, `{"sampling":{}}`},
		{"2025-06-18", &mcp.SamplingCapabilities{}, `{"sampling":{}}`},
		{"2025-11-25", &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}}, `{"sampling":{"tools":{}}}`},
		{"2025-11-25", &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}, Context: &mcp.SamplingContextCapabilities{}}, `{"sampling":{"context":{},"tools":{}}}`},
		// A 2026-07-28 upstream is offered, on every request, what the
		// host declared on that request.
		{"2026-07-28", nil, `{}`},
		{"2026-07-28", &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}}, `{"sampling":{"tools":{}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.version+" "+tc.wantCaps, func(t *testing.T) {
			opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Sampling: tc.sampling}}
			if tc.sampling != nil {
				opts.CreateMessageWithToolsHandler = answer
			}
			host := connectHost(t, newTestProxy(t, "peer"), tc.version, opts)
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "client_info", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			var got peer.ClientInfo
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
				t.Fatal(err)
			}
			if want := host.InitializeResult().ProtocolVersion; got.ProtocolVersion != want {
				t.Errorf("upstream session at %s, host session at %s", got.ProtocolVersion, want)
			}
			if diff := cmp.Diff(tc.wantCaps, compact(got.Capabilities)); diff != "" {
				t.Errorf("capabilities offered upstream (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPushWithoutHostSampling: an upstream that pushes sampling anyway when
// the host cannot sample gets -32603 at once, not a wait.
func TestPushWithoutHostSampling(t *testing.T) {
	host := connectHost(t, newTestProxy(t, "peer"), "2025-11-25", nil)
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{
		"params": json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`)}})
	if err != nil {
		t.Fatal(err)
	}
	var got peer.SampleOutcome
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	if got.Error == nil || got.Error.Code != -32603 || got.Error.Message != "no host can answer sampling requests" {
		t.Fatalf("upstream got %+v, want -32603 no host", got)
	}
}

// TestInputRequestHostCannotAnswer: a 2026-07-28 upstream asking for a
// completion the host cannot give fails the host's call at once: -32021
// naming sampling for a 2026-07-28 host, -32602 for an older one.
func TestInputRequestHostCannotAnswer(t *testing.T) {
	for _, tc := range []struct {
		era  string
		code int64
	}{{"2025-11-25", -32602}, {"2026-07-28", -32021}} {
		t.Run(tc.era, func(t *testing.T) {
			p := newTestProxy(t, "peer")
			p.cfg.Upstreams[0].Era = "2026-07-28"
			host := connectHost(t, p, tc.era, nil)
			_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample_input", Arguments: map[string]any{
				"params": json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`)}})
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != tc.code {
				t.Fatalf("err = %v, want code %d", err, tc.code)
			}
			if tc.code == -32021 && compact(we.Data) != `{"reason_codes":["capability-missing"],"requiredCapabilities":{"sampling":{}}}` {
				t.Errorf("data = %s, want the sampling capability named", we.Data)
			}
		})
	}
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
