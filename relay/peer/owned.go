package peer

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// UpstreamOptions gives the test upstream things of its own to own, so a
// test with several of them sees which one a request reached.
type UpstreamOptions struct {
	// Name marks what this upstream answers (reads, completions) and turns
	// on completions: every completion answers [Name + ":" + value].
	Name string
	// Resources are listed; a read of one answers "<Name> read <uri>".
	Resources []string
	// Templates are listed as resource templates, read the same way.
	Templates []string
	// Record keeps every request and notification the upstream receives,
	// for the `received` tool (a hostile server's view of what reached it).
	Record bool
}

// Received is one message the upstream received, as `received` reports it.
type Received struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// maxRecorded bounds what Record keeps.
const maxRecorded = 10_000

// recorder keeps what the upstream received.
type recorder struct {
	mu  sync.Mutex
	got []Received
}

// middleware records every message but the calls that read the record.
func (r *recorder) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ct, ok := req.(*mcp.CallToolRequest); !ok || ct.Params.Name != "received" {
			params, _ := json.Marshal(req.GetParams())
			r.mu.Lock()
			if len(r.got) < maxRecorded {
				r.got = append(r.got, Received{Method: method, Params: params})
			}
			r.mu.Unlock()
		}
		return next(ctx, method, req)
	}
}

// received is the `received` tool: the record, as a JSON array.
func (r *recorder) received(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	r.mu.Lock()
	text, _ := json.Marshal(append([]Received{}, r.got...))
	r.mu.Unlock()
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
}

// serverOptions is what the upstream's server is made with: a completion
// handler when it has a name.
func (o UpstreamOptions) serverOptions() *mcp.ServerOptions {
	if o.Name == "" {
		return nil
	}
	return &mcp.ServerOptions{CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{o.Name + ":" + req.Params.Argument.Value}}}, nil
	}}
}

// own adds o's resources, templates and record to srv.
func (o UpstreamOptions) own(srv *mcp.Server) {
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: req.Params.URI, MIMEType: "text/plain", Text: o.Name + " read " + req.Params.URI}}}, nil
	}
	for _, uri := range o.Resources {
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"}, read)
	}
	for _, t := range o.Templates {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t, Name: t, MIMEType: "text/plain"}, read)
	}
	if o.Record {
		r := &recorder{}
		srv.AddReceivingMiddleware(r.middleware)
		srv.AddTool(&mcp.Tool{Name: "received", Description: "Reports every request and notification this server received.",
			InputSchema: json.RawMessage(`{"type":"object"}`)}, r.received)
	}
}

// notifyRaw is the `notify_raw {method, params, times}` tool: it sends a
// notification the SDK has no call for (notifications/cancelled naming
// requests it never received, say), times times, on the session's
// connection.
func (r *rawParams) notifyRaw(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Method == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "notify_raw needs {method, params: [...]}"}
	}
	r.mu.Lock()
	conn := r.conn
	r.mu.Unlock()
	if conn == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "notify_raw works over stdio only"}
	}
	for _, p := range args.Params {
		if err := conn.Write(ctx, &jsonrpc.Request{Method: args.Method, Params: p}); err != nil {
			return nil, err
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil
}
