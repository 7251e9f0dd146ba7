package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools that answer as a hostile server answers a host's call: with any
// bytes at all as its result (answer_raw) or as its error's data
// (fail_raw, failraw.go), or after it stopped reading what it is sent
// (stop_reading).

// addAnswerTools adds answer_raw, fail_raw and stop_reading to srv.
func addAnswerTools(srv *mcp.Server, raw *rawParams, gate *readGate) {
	addFailRaw(srv, raw)
	srv.AddTool(&mcp.Tool{Name: "answer_raw", Description: "Answers with the base64-decoded bytes, unchanged, as its result (over stdio: byte for byte).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"raw_b64":{"type":"string"}},"required":["raw_b64"]}`)}, raw.answerRaw)
	srv.AddTool(&mcp.Tool{Name: "stop_reading", Description: "Stops reading its input for good and answers with its process id.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, gate.stop)
}

// answerRaw parks the decoded bytes, to go out in place of the result
// whose _meta names them (swapResult).
func (r *rawParams) answerRaw(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, err := rawArgument(req)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{}, Meta: mcp.Meta{rawKey: r.put(raw)}}, nil
}

// swapResult is resp with its result swapped for the bytes answer_raw
// parked, or nil when it carries none.
func (c *swapConn) swapResult(resp *jsonrpc.Response) *jsonrpc.Response {
	if !bytes.Contains(resp.Result, []byte(rawKey)) {
		return nil
	}
	var res struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(resp.Result, &res) != nil {
		return nil
	}
	token, _ := res.Meta[rawKey].(string)
	if token == "" {
		return nil
	}
	raw, ok := c.raw.take(token)
	if !ok {
		return nil
	}
	swapped := *resp
	swapped.Result = c.swapIn(raw)
	return &swapped
}

// readGate is the upstream's input, which stop_reading stops reading for
// good: a server that no longer reads fills the pipe its client writes to.
type readGate struct {
	io.ReadCloser
	mu      sync.Mutex
	stopped chan struct{}
}

func newReadGate(in io.ReadCloser) *readGate {
	return &readGate{ReadCloser: in, stopped: make(chan struct{})}
}

func (g *readGate) Read(p []byte) (int, error) {
	select {
	case <-g.stopped:
		select {} // never again: the process ends by a signal
	default:
	}
	return g.ReadCloser.Read(p)
}

func (g *readGate) stop(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.stopped:
	default:
		close(g.stopped)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil
}
