package peer

import (
	"context"
	"encoding/json"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// linger is the `linger {ms}` tool: it answers at once, but leaves its
// process running for ms (at most lateFinish) after its client closes the
// session, and deaf to SIGTERM: a server that takes its time to go, as
// a hostile one may, so that a test sees what the firewall counts while
// the process is still there.
func (w *lateWork) linger(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		MS int `json:"ms"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "linger needs {ms}"}
	}
	signal.Ignore(syscall.SIGTERM)
	w.pending.Add(1) // finish waits for it when the session ends
	go func() {
		defer w.pending.Done()
		time.Sleep(time.Duration(args.MS) * time.Millisecond)
	}()
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "lingering"}}}, nil
}
