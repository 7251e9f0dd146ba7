package peer

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askPair is the `ask_pair {first, second, input}` tool: two elicitations
// asked together, pushed at once (a server up to 2025-11-25), or with
// input as the input requests "a" and "b" of one 2026-07-28 round; it
// reports both answers,
// first then second, as a JSON array of AskOutcome. An upstream asks so to
// have a person's approval of one of them stand for the other.
func askPair(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		First, Second json.RawMessage
		Input         bool
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.First == nil || args.Second == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "ask_pair needs {first, second}"}
	}
	if req.Params.RequestState != "" {
		in := req.Params.InputResponses
		return pairResult(askResult(in["a"], nil), askResult(in["b"], nil)), nil
	}
	var params [2]*mcp.ElicitParams
	for i, raw := range []json.RawMessage{args.First, args.Second} {
		p, err := elicitParams(raw)
		if err != nil {
			return nil, err
		}
		params[i] = p
	}
	if args.Input {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"a": params[0], "b": params[1]}, RequestState: "ask-pair"}, nil
	}
	var out [2]*mcp.CallToolResult
	var wg sync.WaitGroup
	for i, p := range params {
		wg.Go(func() {
			schema := p.RequestedSchema
			p.RequestedSchema = nil
			res, err := req.Session.Elicit(context.WithValue(ctx, elicitSchemaKey{}, schema), p)
			out[i] = askResult(res, err)
		})
	}
	wg.Wait()
	return pairResult(out[0], out[1]), nil
}

// pairResult joins two AskOutcome results into one array.
func pairResult(a, b *mcp.CallToolResult) *mcp.CallToolResult {
	text := "[" + a.Content[0].(*mcp.TextContent).Text + "," + b.Content[0].(*mcp.TextContent).Text + "]"
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
