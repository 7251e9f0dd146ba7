package peer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool returns the `add_tool {name}` tool's handler: it adds a tool that
// echoes, so the server tells its client that its tool list changed.
func addTool(srv *mcp.Server) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Name == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "add_tool needs {name}"}
		}
		srv.AddTool(&mcp.Tool{Name: args.Name, InputSchema: json.RawMessage(`{"type":"object"}`)}, echo)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + args.Name}}}, nil
	}
}

// progress sends `steps` progress notifications for its call, with the
// token the client gave, then returns.
func progress(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Steps int `json:"steps"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &args)
	token := req.Params.GetProgressToken()
	for i := 1; i <= args.Steps && token != nil; i++ {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
			Progress: float64(i), Total: float64(args.Steps), Message: fmt.Sprintf("step %d", i)})
		if err != nil {
			return nil, err
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("token %v", token)}}}, nil
}

// meta reports the _meta its request arrived with, and answers with _meta
// of its own, including protocol keys that describe this hop only: a relay
// must pass neither side's to the other.
func meta(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	got, _ := json.Marshal(req.Params.Meta)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(got)}},
		Meta: mcp.Meta{
			mcp.MetaKeyServerInfo:              map[string]any{"name": "peer-secret-server", "version": "9"},
			"io.modelcontextprotocol/internal": "peer-secret-key",
			"vendor.example/kept":              "yes",
		}}, nil
}

// block waits until its call is cancelled, then records that in the file
// named by MCPXFW_PEER_LOG (its result would reach nobody).
func block(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	<-ctx.Done()
	logLine("block: cancelled")
	return nil, ctx.Err()
}
