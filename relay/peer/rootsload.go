package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RootsTally is what the roots load tools report: how many roots requests
// got a list, and each distinct error the others got, with how many got
// it. A flood of thousands reports in a few lines.
type RootsTally struct {
	Answered int            `json:"answered"`
	Refused  []RefusalCount `json:"refused,omitempty"`
}

// RefusalCount is one error and how many requests got it.
type RefusalCount struct {
	Error Error `json:"error"`
	Count int   `json:"count"`
}

// addRootsLoad registers the roots load tools (with LoadEnv=1, as
// addLoad's): roots_each {count} pushes count roots/list requests at once
// and reports their RootsTally once every one has its answer, each outcome
// also a line of the MCPXFW_PEER_LOG file as it arrives (AskOutcome);
// roots_input_each {count} asks for the roots as count 2026-07-28 input
// requests of one round, and reports the RootsTally of the answers its
// retry carries.
func addRootsLoad(srv *mcp.Server, l *load) {
	srv.AddTool(&mcp.Tool{Name: "roots_each", Description: "Pushes count roots/list requests at once; reports how many got a list and what the others got.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)}, l.rootsEach)
	srv.AddTool(&mcp.Tool{Name: "roots_input_each", Description: "Asks for the roots as count 2026-07-28 input requests in one round; reports how many answers were lists.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)}, rootsInputEach)
}

// rootsCount reads the count argument of the roots load tools.
func rootsCount(req *mcp.CallToolRequest) (int, error) {
	var args struct {
		Count int `json:"count"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Count < 1 {
		return 0, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "needs {count} of at least 1"}
	}
	return args.Count, nil
}

// rootsEach pushes the roots/list requests, all at once, and waits for
// every answer.
func (l *load) rootsEach(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n, err := rootsCount(req)
	if err != nil {
		return nil, err
	}
	var t tally
	var wg sync.WaitGroup
	for range n {
		l.pushes.Add(1)
		wg.Go(func() {
			defer l.pushes.Done()
			res, err := req.Session.ListRoots(ctx, &mcp.ListRootsParams{})
			logLine(t.add(res, err))
		})
	}
	wg.Wait()
	return t.result(), nil
}

// rootsInputEach asks for the roots as count input requests, then reports
// the answers.
func rootsInputEach(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params.RequestState != "" {
		var t tally
		for _, a := range req.Params.InputResponses {
			res, _ := a.(*mcp.ListRootsResult)
			var err error
			if res == nil {
				err = fmt.Errorf("answer %T, not a roots list", a)
			}
			t.add(res, err)
		}
		return t.result(), nil
	}
	n, err := rootsCount(req)
	if err != nil {
		return nil, err
	}
	reqs := mcp.InputRequestMap{}
	for i := range n {
		reqs[fmt.Sprintf("roots-%d", i)] = &mcp.ListRootsParams{}
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: "roots-each"}, nil
}

// tally counts outcomes as they arrive, from any goroutine.
type tally struct {
	mu    sync.Mutex
	t     RootsTally
	index map[string]int // each distinct error's place in t.Refused
}

// add counts one outcome and returns it as a line (AskOutcome).
func (t *tally) add(res *mcp.ListRootsResult, err error) string {
	var o AskOutcome
	if err != nil {
		o.Error = asError(err)
	} else {
		o.Result, _ = json.Marshal(res)
	}
	line, _ := json.Marshal(o)
	t.mu.Lock()
	defer t.mu.Unlock()
	if o.Error == nil {
		t.t.Answered++
		return string(line)
	}
	key := fmt.Sprintf("%d %q %s", o.Error.Code, o.Error.Message, compactJSON(o.Error.Data))
	if t.index == nil {
		t.index = map[string]int{}
	}
	i, ok := t.index[key]
	if !ok {
		i = len(t.t.Refused)
		t.index[key] = i
		t.t.Refused = append(t.t.Refused, RefusalCount{Error: *o.Error})
	}
	t.t.Refused[i].Count++
	return string(line)
}

// result is the tally as a tool's result.
func (t *tally) result() *mcp.CallToolResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	text, _ := json.Marshal(t.t)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// compactJSON is raw without insignificant whitespace (json.Marshal
// compacts a RawMessage), so equal data count as one error.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	out, _ := json.Marshal(raw)
	return string(out)
}
