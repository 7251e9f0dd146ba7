package relay

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		{"2026-07-28", nil, `{}`}, // served as 2025-11-25 until the input-request loop lands
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

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
