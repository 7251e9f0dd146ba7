package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/demopeer"
)

// SampleOutcome is what the `sample` tool reports: the completion the
// upstream received, or the JSON-RPC error its sampling request got.
type SampleOutcome struct {
	Completion json.RawMessage `json:"completion,omitempty"`
	Error      *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error as a peer saw it: the demo's own.
type Error = demopeer.Error

// RunUpstream serves the test upstream over the given streams until the
// client goes away. Its tools: sample {params, times, together} pushes
// params as sampling/createMessage requests (together at once, times in a
// row, stopping at the first refusal); sample_input {params, rounds} asks for it
// as a 2026-07-28 input request (sample_input_raw {raw_b64}: exact bytes);
// sample_late {params, after_ms} pushes after its call answered, and
// await_late makes those pushes go out during its own call (late.go);
// echo {text}; add_tool {name}; progress {steps, hold, tokens} and release
// {hold}; notify_raw {method, params}; meta (reports _meta);
// ask_all (elicitation, roots and sampling in one round); shed {times}
// (load shedding); block (until cancelled); fail (a JSON-RPC error);
// url_required {ids, urls, data_b64} (-32042, URL elicitation required); roots_input
// {bare} (the roots as an input request, bare: without params);
// stderr {text} (raw bytes on its stderr); linger {ms} (its process
// outlives its session, deaf to SIGTERM); ask_pair {first, second, input}
// (two elicitations asked together); answer_raw {raw_b64} (exact
// bytes as its result) and stop_reading (stops reading its input; over
// stdio only); and, with MCPXFW_PEER_HOSTILE=1,
// attack (see attack_linux.go).
// It also has a prompt `greet` and a resource `peer://readme`.
func RunUpstream(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return RunUpstreamWith(ctx, in, out, UpstreamOptions{})
}

// RunUpstreamWith is RunUpstream with things of its own to own (see
// UpstreamOptions).
func RunUpstreamWith(ctx context.Context, in io.ReadCloser, out io.WriteCloser, opts UpstreamOptions) error {
	raw := &rawParams{pending: map[string]json.RawMessage{}}
	srv, late := newServer(raw, opts)
	gate := newReadGate(in)
	addAnswerTools(srv, raw, gate)           // stdio only: framepath.go
	in, out, wait := addLoad(srv, gate, out) // with MCPXFW_PEER_LOAD=1: load.go
	err := srv.Run(ctx, &swapTransport{Transport: &mcp.IOTransport{Reader: in, Writer: out}, raw: raw})
	wait()
	late.finish(lateFinish)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// newServer is the test upstream's server, the same over stdio and HTTP;
// raw holds the bytes the *_raw tools swap in on the way out. The late
// work its sample_late calls leave is returned, so that whoever ends the
// server can let it finish.
func newServer(raw *rawParams, opts UpstreamOptions) (*mcp.Server, *lateWork) {
	srv := mcp.NewServer(serverInfo(), opts.serverOptions())
	srv.AddTool(&mcp.Tool{Name: "sample", Description: "Pushes the given sampling/createMessage params to the client (times in a row, together at once; with cancel_ms, cancelling each push after that many ms).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}`)}, sample)
	srv.AddTool(&mcp.Tool{Name: "sample_raw", Description: "Pushes the base64-decoded bytes, unchanged, as sampling/createMessage params.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"raw_b64":{"type":"string"}},"required":["raw_b64"]}`)}, raw.sampleRaw)
	srv.AddTool(&mcp.Tool{Name: "sample_input", Description: "Asks for the given sampling params as a 2026-07-28 input request, rounds times.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"},"rounds":{"type":"integer"}},"required":["params"]}`)}, sampleInput)
	srv.AddTool(&mcp.Tool{Name: "sample_input_raw", Description: "Asks for the base64-decoded bytes, unchanged, as the params of a 2026-07-28 sampling input request.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"raw_b64":{"type":"string"}},"required":["raw_b64"]}`)}, raw.sampleInputRaw)
	late := &lateWork{}
	srv.AddTool(&mcp.Tool{Name: "sample_late", Description: "Answers at once, then pushes params from a goroutine: when the next await_late starts in this process, or after after_ms.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"},"after_ms":{"type":"integer"}},"required":["params"]}`)}, late.sampleLate)
	srv.AddTool(&mcp.Tool{Name: "await_late", Description: "Sends this process's waiting late pushes and waits until every late push has its answer.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, late.awaitLate)
	srv.AddTool(&mcp.Tool{Name: "linger", Description: "Answers at once; its process outlives its session by ms, deaf to SIGTERM.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"}}}`)}, late.linger)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Returns its text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}, echo)
	srv.AddTool(&mcp.Tool{Name: "add_tool", Description: "Adds a tool with the given name (its list changes).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}, addTool(srv))
	holds := &holds{waiting: map[string]chan struct{}{}}
	srv.AddTool(&mcp.Tool{Name: "progress", Description: "Reports progress in the given number of steps; with hold, waits for release after the first; with tokens, sends progress for those tokens instead.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer"},"hold":{"type":"string"},"tokens":{"type":"array"}}}`)}, holds.progress)
	srv.AddTool(&mcp.Tool{Name: "release", Description: "Lets the progress call holding the given key go on.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"hold":{"type":"string"}},"required":["hold"]}`)}, holds.release)
	srv.AddTool(&mcp.Tool{Name: "notify_raw", Description: "Sends the given notification once per params.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"method":{"type":"string"},"params":{"type":"array"}},"required":["method","params"]}`)}, raw.notifyRaw)
	srv.AddTool(&mcp.Tool{Name: "meta", Description: "Reports the request's _meta; answers with _meta of its own.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, meta)
	srv.AddTool(&mcp.Tool{Name: "ask_all", Description: "Asks for an elicitation, the roots and a completion in one 2026-07-28 round.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, askAll)
	srv.AddTool(&mcp.Tool{Name: "ask", Description: "Pushes an elicitation/create or roots/list request with the given params (or an elicitation's exact base64-decoded bytes) to the client; reports the answer.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"method":{"type":"string"},"params":{"type":"object"},"raw_b64":{"type":"string"}},"required":["method"]}`)}, raw.ask)
	srv.AddTool(&mcp.Tool{Name: "ask_input", Description: "Asks for an elicitation or the roots as a 2026-07-28 input request (with entry, raw_b64 is the whole entry); reports the answer.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"method":{"type":"string"},"params":{"type":"object"},"raw_b64":{"type":"string"},"entry":{"type":"boolean"}},"required":["method"]}`)}, raw.askInput)
	srv.AddTool(&mcp.Tool{Name: "ask_pair", Description: "Asks for two elicitations together (pushed at once, or with input in one 2026-07-28 round); reports both answers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"first":{"type":"object"},"second":{"type":"object"},"input":{"type":"boolean"}},"required":["first","second"]}`)}, askPair)
	srv.AddSendingMiddleware(sendSchema)
	srv.AddTool(&mcp.Tool{Name: "shed", Description: "Defers the call the given number of times (load shedding), then answers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"times":{"type":"integer"}}}`)}, shed)
	srv.AddTool(&mcp.Tool{Name: "block", Description: "Waits until the call is cancelled.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, block)
	srv.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails with a JSON-RPC error.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, fail)
	srv.AddTool(&mcp.Tool{Name: "client_info", Description: "Reports the protocol version and capabilities its client declared.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, clientInfo)
	srv.AddTool(&mcp.Tool{Name: "roots_input", Description: "Asks for the client's roots as a 2026-07-28 input request (with bare, without params).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"bare":{"type":"boolean"}}}`)}, raw.rootsInput)
	srv.AddTool(&mcp.Tool{Name: "url_required", Description: "Fails with -32042, URL elicitation required, naming one elicitation per id (at urls[i] when given), or with data_b64 as its exact data.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string"}},"urls":{"type":"array","items":{"type":"string"}},"data_b64":{"type":"string"}}}`)}, urlRequired)
	srv.AddTool(&mcp.Tool{Name: "stderr", Description: "Writes its text, unchanged, to the upstream's stderr.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}, writeStderr)
	addHostileTools(srv) // with MCPXFW_PEER_HOSTILE=1 only: attack_linux.go
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}}, greet)
	srv.AddResource(&mcp.Resource{URI: "peer://readme", Name: "readme", MIMEType: "text/plain"}, readme)
	opts.own(srv)
	return srv, late
}

func sample(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Params   json.RawMessage `json:"params"`
		Times    int             `json:"times"`     // pushes one after another (default 1)
		Together int             `json:"together"`  // pushes at once in each step (default 1)
		CancelMs int             `json:"cancel_ms"` // cancels each push after this many ms (notifications/cancelled)
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sample needs {params}"}
	}
	var params mcp.CreateMessageWithToolsParams
	if err := json.Unmarshal(args.Params, &params); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params: " + err.Error()}
	}
	var last *mcp.CallToolResult
	for range max(args.Times, 1) {
		outcomes := make([]*mcp.CallToolResult, max(args.Together, 1))
		var wg sync.WaitGroup
		for i := range outcomes {
			wg.Go(func() { outcomes[i] = sampleResult(pushCancelled(ctx, args.CancelMs, req.Session, &params)) })
		}
		wg.Wait()
		for _, o := range outcomes {
			logOutcome(o)
			if last = o; o.StructuredContent.(SampleOutcome).Error != nil {
				return o, nil
			}
		}
	}
	return last, nil
}

// pushCancelled pushes params, and cancels the push after ms (the SDK
// then sends notifications/cancelled for it), or never when ms is 0.
func pushCancelled(ctx context.Context, ms int, ss *mcp.ServerSession, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	if ms > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	return ss.CreateMessageWithTools(ctx, params)
}

// logOutcome appends what a push got to the file named by
// MCPXFW_PEER_LOG, if set: a call whose result nobody receives (a host
// that went away) still leaves its record.
func logOutcome(res *mcp.CallToolResult) {
	logLine(res.Content[0].(*mcp.TextContent).Text)
}

// logLine appends one line to the file named by MCPXFW_PEER_LOG, if set.
func logLine(line string) {
	if path := os.Getenv("MCPXFW_PEER_LOG"); path != "" {
		appendLine(path, line)
	}
}

// appendLine appends line to the file at path.
func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintln(f, line)
}

// sampleResult reports what a sampling request got back as the tool's
// result: the completion, or the JSON-RPC error.
func sampleResult(res *mcp.CreateMessageWithToolsResult, err error) *mcp.CallToolResult {
	var outcome SampleOutcome
	if err != nil {
		outcome.Error = asError(err)
	} else {
		outcome.Completion, _ = json.Marshal(res)
	}
	text, _ := json.Marshal(outcome)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: outcome}
}

func asError(err error) *Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return &Error{Code: we.Code, Message: we.Message, Data: we.Data}
	}
	return &Error{Code: 0, Message: err.Error()}
}

func echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &args)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil
}

func fail(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, &jsonrpc.Error{Code: -32000, Message: "fail always fails", Data: json.RawMessage(`{"why":"asked to"}`)}
}

// ClientInfo is what the client_info tool reports.
type ClientInfo struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
}

// It reads what the request carries, so a 2026-07-28 client, which declares
// itself on every request, is reported the same way.
func clientInfo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	caps, _ := json.Marshal(declared(req.ClientCapabilities()))
	text, _ := json.Marshal(ClientInfo{ProtocolVersion: req.ProtocolVersion(), Capabilities: caps})
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
}

// declared lists the capabilities the client put on the wire. The SDK's
// deprecated Roots field is not a pointer and would always marshal as {},
// so roots are read from RootsV2.
func declared(c *mcp.ClientCapabilities) map[string]any {
	out := map[string]any{}
	if c == nil {
		return out
	}
	if c.Sampling != nil {
		out["sampling"] = c.Sampling
	}
	if c.RootsV2 != nil {
		out["roots"] = c.RootsV2
	}
	if c.Elicitation != nil {
		out["elicitation"] = c.Elicitation
	}
	return out
}

func greet(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Description: "A greeting", Messages: []*mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}},
	}}, nil
}

func readme(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "text/plain", Text: "mcpx-fw test upstream"},
	}}, nil
}

// InfoEnv, when set, is the test upstream's serverInfo name, title and
// version: what a hostile upstream says about itself, for tests that
// check where the firewall lets it show.
const InfoEnv = "MCPXFW_PEER_INFO"

func serverInfo() *mcp.Implementation {
	if v := os.Getenv(InfoEnv); v != "" {
		return &mcp.Implementation{Name: v, Title: v, Version: v}
	}
	return &mcp.Implementation{Name: "mcpx-fw-peer", Version: "1"}
}
