package peer

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addFailRaw adds fail_raw to srv: over stdio only, where its bytes go out
// as given.
func addFailRaw(srv *mcp.Server, raw *rawParams) {
	srv.AddTool(&mcp.Tool{Name: "fail_raw", Description: "Fails with a JSON-RPC error whose data is the base64-decoded bytes, unchanged (over stdio: byte for byte).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"raw_b64":{"type":"string"}},"required":["raw_b64"]}`)}, raw.failRaw)
}

// failRaw answers as a hostile server's error does: its data is exactly
// the bytes given, whatever lies between their tokens (the SDK's encoder
// would compact them; exactWriter swaps them in after it).
func (r *rawParams) failRaw(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, err := rawArgument(req)
	if err != nil {
		return nil, err
	}
	return nil, &jsonrpc.Error{Code: -32000, Message: "fail_raw fails", Data: r.marker(raw)}
}
