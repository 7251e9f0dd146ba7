package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

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

// holds are the progress calls waiting for release, by key.
type holds struct {
	mu      sync.Mutex
	waiting map[string]chan struct{}
}

// progress sends `steps` progress notifications for its call, with the
// token the client gave (message "step N of TOKEN"), then returns. With
// hold it waits after the first step until `release {hold}` is called,
// so a test can act while the call is in flight. With tokens it instead
// sends one notification for each token given (message "spray"), as a
// server that guesses or learned other calls' tokens would.
func (h *holds) progress(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Steps  int    `json:"steps"`
		Hold   string `json:"hold"`
		Tokens []any  `json:"tokens"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &args)
	if args.Tokens != nil {
		return spray(ctx, req.Session, args.Tokens, req.Params.GetProgressToken())
	}
	token := req.Params.GetProgressToken()
	var release chan struct{}
	if args.Hold != "" {
		release = h.hold(args.Hold)
	}
	for i := 1; i <= args.Steps && token != nil; i++ {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
			Progress: float64(i), Total: float64(args.Steps), Message: fmt.Sprintf("step %d of %v", i, token)})
		if err != nil {
			return nil, err
		}
		if i == 1 && release != nil {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("token %v", token)}}}, nil
}

// spray sends progress for each of tokens, then "spray done" for its own
// call's token, if it has one: notifications of one session are handled in
// order, so a host that sees that one has seen whatever of the spray got
// through.
func spray(ctx context.Context, ss *mcp.ServerSession, tokens []any, own any) (*mcp.CallToolResult, error) {
	for _, t := range tokens {
		if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: t, Progress: 1, Message: "spray"}); err != nil {
			return nil, err
		}
	}
	if own != nil {
		if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: own, Progress: 1, Message: "spray done"}); err != nil {
			return nil, err
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sprayed %d", len(tokens))}}}, nil
}

func (h *holds) hold(key string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiting[key] == nil {
		h.waiting[key] = make(chan struct{})
	}
	return h.waiting[key]
}

// release is the `release {hold}` tool: the progress call holding key
// goes on (now, or as soon as it holds).
func (h *holds) release(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Hold string `json:"hold"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Hold == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "release needs {hold}"}
	}
	ch := h.hold(args.Hold)
	h.mu.Lock()
	select {
	case <-ch: // released before
	default:
		close(ch)
	}
	h.mu.Unlock()
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
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
	logLine("block: waiting")
	<-ctx.Done()
	logLine("block: cancelled")
	return nil, ctx.Err()
}
