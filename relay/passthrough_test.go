package relay

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// call is one non-sampling request a host makes.
type call struct {
	name string
	do   func(context.Context, *mcp.ClientSession) (any, error)
}

var passthroughCalls = []call{
	{"tools/list", func(ctx context.Context, cs *mcp.ClientSession) (any, error) { return cs.ListTools(ctx, nil) }},
	{"tools/call echo", func(ctx context.Context, cs *mcp.ClientSession) (any, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "héllo"}})
	}},
	{"tools/call fail (JSON-RPC error)", func(ctx context.Context, cs *mcp.ClientSession) (any, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}})
	}},
	{"tools/call unknown tool", func(ctx context.Context, cs *mcp.ClientSession) (any, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	}},
	{"prompts/list", func(ctx context.Context, cs *mcp.ClientSession) (any, error) { return cs.ListPrompts(ctx, nil) }},
	{"prompts/get", func(ctx context.Context, cs *mcp.ClientSession) (any, error) {
		return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	}},
	{"resources/list", func(ctx context.Context, cs *mcp.ClientSession) (any, error) { return cs.ListResources(ctx, nil) }},
	{"resources/read", func(ctx context.Context, cs *mcp.ClientSession) (any, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "peer://readme"})
	}},
	{"resources/read unknown", func(ctx context.Context, cs *mcp.ClientSession) (any, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "peer://missing"})
	}},
}

// TestPassthroughUnchanged: with one upstream, every non-sampling request
// gets through the firewall exactly what it gets from the upstream
// directly: names, results and errors (code, message, data).
func TestPassthroughUnchanged(t *testing.T) {
	direct := connectDirect(t, "2025-11-25")
	via := connectHost(t, newTestProxy(t, "peer"), "2025-11-25", nil)
	for _, c := range passthroughCalls {
		t.Run(c.name, func(t *testing.T) {
			want := outcomeJSON(c.do(t.Context(), direct))
			got := outcomeJSON(c.do(t.Context(), via))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("through the firewall differs from direct (-direct +firewall):\n%s", diff)
			}
		})
	}
}

// outcomeJSON renders a result or a JSON-RPC error as comparable JSON.
func outcomeJSON(res any, err error) string {
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			b, _ := json.Marshal(map[string]any{"code": we.Code, "message": we.Message, "data": we.Data})
			return string(b)
		}
		return "non-JSON-RPC error: " + err.Error()
	}
	b, _ := json.Marshal(res)
	return string(b)
}

func TestSeveralUpstreamsArePrefixed(t *testing.T) {
	via := connectHost(t, newTestProxy(t, "alpha", "beta"), "2025-11-25", nil)
	tools, err := via.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	var want []string
	for _, server := range []string{"alpha", "beta"} {
		for _, tool := range []string{"add_tool", "answer_raw", "ask", "ask_all", "ask_input", "ask_pair", "await_late", "block", "client_info", "echo", "fail", "fail_raw", "linger", "meta", "notify_raw", "progress", "release", "roots_input", "sample", "sample_input", "sample_input_raw", "sample_late", "sample_raw", "shed", "stderr", "stop_reading", "url_required"} {
			want = append(want, server+"__"+tool)
		}
	}
	if diff := cmp.Diff(want, sortedCopy(names)); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
	res, err := via.CallTool(t.Context(), &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Fatalf("beta__echo: %v, %v", res, err)
	}
	prompt, err := via.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "alpha__greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(prompt.Messages) != 1 {
		t.Fatalf("alpha__greet: %v, %v", prompt, err)
	}
	_, err = via.CallTool(t.Context(), &mcp.CallToolParams{Name: "gamma__echo", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("unknown server prefix: err %v, want -32602", err)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestPassedThrough: an upstream's own error to a host's call reaches the
// host as the upstream sent it.
func TestPassedThrough(t *testing.T) {
	we := &jsonrpc.Error{Code: -32000, Message: "the upstream's words", Data: json.RawMessage(`{"why":1}`)}
	if got := upstreamError(&upstream{cfg: Upstream{Name: "notes"}}, we); got != we {
		t.Errorf("upstreamError = %v, want the upstream's own error", got)
	}
}
