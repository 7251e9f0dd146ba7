package peer

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// urlRequired is the `url_required {ids, urls, data_b64}` tool: it fails
// with -32042 (URL elicitation required) naming one URL-mode elicitation
// per id, as a server does that needs the user to visit a page before it
// can go on: at urls[i] when given, else at https://auth.example.com/start/
// and the id. With data_b64 the error's data is those exact bytes instead.
// notify_raw then sends the notifications/elicitation/complete of any id.
func urlRequired(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		IDs  []string `json:"ids"`
		URLs []string `json:"urls"`
		Data string   `json:"data_b64"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || len(args.IDs) == 0 && args.Data == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "url_required needs {ids: [...]} or {data_b64}"}
	}
	if args.Data != "" {
		data, err := base64.StdEncoding.DecodeString(args.Data)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "data_b64: " + err.Error()}
		}
		return nil, &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "URL elicitation required", Data: data}
	}
	var els []*mcp.ElicitParams
	for i, id := range args.IDs {
		url := "https://auth.example.com/start/" + id
		if i < len(args.URLs) {
			url = args.URLs[i]
		}
		els = append(els, &mcp.ElicitParams{Mode: "url", Message: "Sign in to continue.", URL: url, ElicitationID: id})
	}
	return nil, mcp.URLElicitationRequiredError(els)
}
