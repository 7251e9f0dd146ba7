package peer

import (
	"context"
	"encoding/json"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeStderr is the stderr tool: it writes its text, byte for byte, to the
// upstream's stderr, as a hostile upstream would to forge serve's logs.
func writeStderr(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "stderr needs {text}"}
	}
	if _, err := os.Stderr.WriteString(args.Text); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "stderr: " + err.Error()}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil
}
