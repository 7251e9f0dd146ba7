package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lateWork is sampling the test upstream asks for after the call that
// started it has answered, as a server with work left over would (a
// goroutine that outlives its tool call). Each late push goes out when the
// next await_late call starts in this process or after its delay,
// whichever comes first: so a test can make it arrive exactly while a
// later call runs on the same process, and, on a process no later call
// reaches, still have it sent.
type lateWork struct {
	mu      sync.Mutex
	waiting []chan struct{} // one per late push not sent yet: closed to send it now
	pending sync.WaitGroup  // late pushes not answered yet
}

// sampleLate is the `sample_late {params, after_ms}` tool: it answers at
// once, then pushes params from a goroutine (see lateWork) and records
// what the push got in MCPXFW_PEER_LOG as "late: <outcome>".
func (w *lateWork) sampleLate(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Params  json.RawMessage `json:"params"`
		AfterMS int             `json:"after_ms"`
	}
	var params mcp.CreateMessageWithToolsParams
	if json.Unmarshal(req.Params.Arguments, &args) != nil || json.Unmarshal(args.Params, &params) != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sample_late needs {params, after_ms}"}
	}
	now := make(chan struct{})
	w.mu.Lock()
	w.waiting = append(w.waiting, now)
	w.pending.Add(1)
	w.mu.Unlock()
	session := req.Session
	go func() {
		defer w.pending.Done()
		select {
		case <-now:
		case <-time.After(time.Duration(args.AfterMS) * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		logLine("late: " + sampleResult(session.CreateMessageWithTools(ctx, &params)).Content[0].(*mcp.TextContent).Text)
	}()
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "scheduled"}}}, nil
}

// lateFinish bounds how long an ending server waits for its late pushes.
const lateFinish = 5 * time.Second

// finish sends the late pushes still waiting, now that the session has
// ended (each then fails at once, as a push on a closed session does), and
// waits, up to timeout, until every one has recorded its outcome: a push
// whose session the firewall closed before its timer fired is recorded
// too, instead of dying with the process.
func (w *lateWork) finish(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	w.sendAndWait(ctx)
}

// awaitLate is the `await_late` tool: it sends the late pushes of this
// process that are still waiting, waits until every late push of this
// process has its answer (or its call is cancelled), and reports how many
// it sent.
func (w *lateWork) awaitLate(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sent, err := w.sendAndWait(ctx)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sent %d late", sent)}}}, nil
}

// sendAndWait sends the late pushes still waiting and waits until every
// late push has its answer, or ctx ends; it reports how many it sent.
func (w *lateWork) sendAndWait(ctx context.Context) (int, error) {
	w.mu.Lock()
	waiting := w.waiting
	w.waiting = nil
	w.mu.Unlock()
	for _, now := range waiting {
		close(now)
	}
	answered := make(chan struct{})
	go func() {
		w.pending.Wait()
		close(answered)
	}()
	select {
	case <-answered:
		return len(waiting), nil
	case <-ctx.Done():
		return len(waiting), ctx.Err()
	}
}
