package peer

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SampleWithMeta is Sample with meta as the tools/call's _meta, as a host
// inside a trace sends its trace context (SEP-414: traceparent,
// tracestate).
func (h *Host) SampleWithMeta(ctx context.Context, params json.RawMessage, meta map[string]any) (*SampleOutcome, error) {
	return outcome(h.callTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"params": params}, Meta: meta}))
}
