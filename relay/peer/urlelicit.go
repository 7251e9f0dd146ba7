package peer

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// urlRequired is the `url_required {ids}` tool: it fails with -32042 (URL
// elicitation required) naming one URL-mode elicitation per id, as a
// server does that needs the user to visit a page before it can go on.
// notify_raw then sends the notifications/elicitation/complete of any id.
func urlRequired(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || len(args.IDs) == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "url_required needs {ids: [...]}"}
	}
	var els []*mcp.ElicitParams
	for _, id := range args.IDs {
		els = append(els, &mcp.ElicitParams{Mode: "url", Message: "Sign in to continue.", URL: "https://auth.example.com/start/" + id, ElicitationID: id})
	}
	return nil, mcp.URLElicitationRequiredError(els)
}
