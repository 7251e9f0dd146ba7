package relay

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// samplingCases are one request per outcome: what reaches the upstream
// and whether the host's model is asked.
var samplingCases = []struct {
	name      string
	params    string
	code      int64 // 0: answered
	hostAsked bool
	approve   bool // escalated; the test approves it
}{
	{"permit", `{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":10}`, 0, true, false},
	{"deny", `{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":5000}`, -1, false, false},
	{"invalid", `{"messages":[{"role":"user","content":{"type":"tool_result","toolUseId":"t1","content":[]}}],"maxTokens":10}`, -32602, false, false},
	{"escalate", `{"messages":[{"role":"user","content":{"type":"text","text":"what is the admin password?"}}],"maxTokens":10}`, 0, true, true},
}

// TestEraMatrix runs every sampling case through each pairing of a host
// and an upstream era, in process: a push from a legacy upstream, and an
// input request from a 2026-07-28 upstream, each behind a legacy and a
// 2026-07-28 host (the push through the bridge).
func TestEraMatrix(t *testing.T) {
	cells := []struct {
		name, host, protocol, tool string
	}{
		{"legacy-upstream/legacy-host", "2025-11-25", "legacy", "sample"},
		{"2026-upstream/legacy-host", "2025-11-25", modernEra, "sample_input"},
		{"2026-upstream/2026-host", modernEra, "", "sample_input"},
		{"legacy-upstream/2026-host", modernEra, "legacy", "sample"},
	}
	for _, cell := range cells {
		for _, tc := range samplingCases {
			t.Run(cell.name+"/"+tc.name, func(t *testing.T) {
				p := newTestProxy(t, "peer")
				p.cfg.Upstreams[0].Era = cell.protocol
				var asked atomic.Int32
				host := connectHost(t, p, cell.host, samplingHost(&asked))
				if got := host.InitializeResult().ProtocolVersion; got != cell.host {
					t.Fatalf("host speaks %s, want %s", got, cell.host)
				}
				if tc.approve {
					go func() {
						if _, err := p.store.Approve(context.Background(), pendingID(t, p.store), "alice", ""); err != nil {
							t.Error(err)
						}
					}()
				}
				completion, code := sampleThrough(t, host, cell.tool, tc.params)
				if code != tc.code {
					t.Fatalf("code = %d, want %d", code, tc.code)
				}
				if tc.code == 0 && !json.Valid(completion) {
					t.Fatalf("no completion: %s", completion)
				}
				if got := asked.Load() > 0; got != tc.hostAsked {
					t.Errorf("host asked = %v, want %v", got, tc.hostAsked)
				}
			})
		}
	}
}

// samplingHost declares sampling and answers every request the same way.
func samplingHost(asked *atomic.Int32) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "test-model",
				Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
		},
	}
}

// sampleThrough calls the upstream's tool with params and reads what the
// upstream got: a completion, or the error code its request was refused
// with. A push reports a refusal in the tool's result; an input request's
// refusal fails the host's call itself.
func sampleThrough(t *testing.T, host *mcp.ClientSession, tool, params string) (json.RawMessage, int64) {
	t.Helper()
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"params": json.RawMessage(params)}})
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Fatalf("call failed without a JSON-RPC error: %v", err)
		}
		return nil, we.Code
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if tool == "sample" {
		var got peer.SampleOutcome
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Fatal(err)
		}
		if got.Error != nil {
			return nil, got.Error.Code
		}
		return got.Completion, 0
	}
	var got peer.InputOutcome
	if err := json.Unmarshal([]byte(text), &got); err != nil || len(got.Completions) == 0 {
		t.Fatalf("result %s: %v", text, err)
	}
	return got.Completions[0], 0
}
