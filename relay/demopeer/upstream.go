package demopeer

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools are the demo upstream's tools, all of them: sample {params}
// pushes params as one sampling/createMessage request, elicit {params} as
// one elicitation/create request (form or url); each reports the
// host's answer as an Outcome.
var Tools = []string{"sample", "elicit"}

// RunUpstream serves the demo upstream over the given streams until the
// client goes away.
func RunUpstream(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	err := newServer().Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func newServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpx-fw-demo", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "sample", Description: "Asks the host's model for a completion of the given sampling/createMessage params.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}`)}, sample)
	srv.AddTool(&mcp.Tool{Name: "elicit", Description: "Asks the user, through the host, with the given elicitation/create params.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}`)}, elicit)
	return srv
}

func sample(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var params mcp.CreateMessageWithToolsParams
	if err := paramsOf(req, &params); err != nil {
		return nil, err
	}
	return report(outcomeOf(req.Session.CreateMessageWithTools(ctx, &params))), nil
}

func elicit(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var params struct {
		mcp.ElicitParams
		Schema json.RawMessage `json:"requestedSchema"` // sent as written
	}
	if err := paramsOf(req, &params); err != nil {
		return nil, err
	}
	p := params.ElicitParams
	p.RequestedSchema = nil
	if len(params.Schema) > 0 {
		p.RequestedSchema = params.Schema
	}
	return report(outcomeOf(req.Session.Elicit(ctx, &p))), nil
}

// paramsOf decodes the tool's params argument into v.
func paramsOf(req *mcp.CallToolRequest, v any) error {
	var args struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || len(args.Params) == 0 {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: req.Params.Name + " needs {params}"}
	}
	if err := json.Unmarshal(args.Params, v); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params: " + err.Error()}
	}
	return nil
}

// report is an Outcome as the tool's result, in its text.
func report(o Outcome) *mcp.CallToolResult {
	text, _ := json.Marshal(o)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}
