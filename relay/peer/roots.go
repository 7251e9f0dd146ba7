package peer

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rootsInput is the `roots_input {bare}` tool: it asks for the client's
// roots as a 2026-07-28 input request ("roots"), then reports the answer it
// got. With bare, the entry goes without params, as mcp-go and the
// TypeScript SDK v2 send it (valid: roots/list takes none), which the Go
// SDK cannot express: the peer's transport drops them (swapInputs).
func (r *rawParams) rootsInput(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Bare bool `json:"bare"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "roots_input takes {bare}"}
	}
	if a, ok := req.Params.InputResponses["roots"]; ok {
		text, _ := json.Marshal(a)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
	}
	params := &mcp.ListRootsParams{}
	if args.Bare {
		params.Meta = mcp.Meta{rawKey: r.put(nil)} // nothing to swap in: no params
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": params}, RequestState: "roots"}, nil
}
