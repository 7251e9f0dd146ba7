package peer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Answer answers one sampling request with a CreateMessageResult as JSON,
// or refuses it with an *Error.
type Answer func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)

// HostOptions configures a test host.
type HostOptions struct {
	Command         []string // started as a subprocess and spoken to over stdio
	Env             []string // the full environment; nil inherits
	Answer          Answer   // nil: the host does not declare sampling
	Tools, Context  bool     // declare sampling.tools / sampling.context
	ProtocolVersion string   // requested version; empty for 2025-11-25
	// Elicit answers elicitation/create requests with an ElicitResult as
	// JSON (nil: the host does not declare elicitation); Roots are the
	// host's roots, by URI (nil: it does not declare roots). Both are
	// answered as pushes (hosts up to 2025-11-25).
	Elicit Answer
	Roots  []string
	// HoldRoots, when set, keeps each roots/list push open until it is
	// closed (or the push is cancelled), so that pushes pile up at the host.
	HoldRoots <-chan struct{}
	// Stderr receives the command's stderr; nil passes it to this
	// process's stderr. A writer that is not a file gets a pipe, which,
	// unlike a file, no RLIMIT_FSIZE on the command limits.
	Stderr io.Writer
}

// Host is an MCP client acting as the host application.
type Host struct {
	session *mcp.ClientSession
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	// Asked counts sampling requests that reached this host.
	Asked chan json.RawMessage
	// Elicited receives the params of each elicitation that reached it.
	Elicited chan json.RawMessage
	roots    rootsAsked
	// progress is every progress notification received (ProgressSeen).
	progress progressSeen
	others   othersSeen
}

// StartHost starts opts.Command and initializes a session with it.
func StartHost(ctx context.Context, opts HostOptions) (*Host, error) {
	h := &Host{Asked: make(chan json.RawMessage, 64), Elicited: make(chan json.RawMessage, 64)}
	copts := h.clientOptions(opts)
	t, err := h.start(opts)
	if err != nil {
		return nil, err
	}
	version := opts.ProtocolVersion
	if version == "" {
		version = "2025-11-25"
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-fw-test-host", Version: "1"}, copts)
	client.AddReceivingMiddleware(h.inputsMiddleware(opts))
	h.addRoots(client, opts)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		_ = h.Disconnect()
		return nil, err
	}
	h.session = cs
	return h, nil
}

// clientOptions declares sampling (with tools and context as asked) when
// the host answers it, and answers with opts.Answer.
func (h *Host) clientOptions(opts HostOptions) *mcp.ClientOptions {
	copts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, ProgressNotificationHandler: h.progress.handle,
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
			h.others.add("notifications/resources/updated")
		},
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { h.others.add("notifications/message") }}
	declareInputs(copts.Capabilities, opts)
	h.handleInputRequests(copts, opts)
	if opts.Answer == nil {
		return copts
	}
	copts.Capabilities.Sampling = &mcp.SamplingCapabilities{}
	if opts.Tools {
		copts.Capabilities.Sampling.Tools = &mcp.SamplingToolsCapabilities{}
	}
	if opts.Context {
		copts.Capabilities.Sampling.Context = &mcp.SamplingContextCapabilities{}
	}
	copts.CreateMessageWithToolsHandler = h.answerWith(opts.Answer)
	return copts
}

// start runs the command with pipes the host keeps, so Disconnect can drop
// the connection the way a crashed host does.
func (h *Host) start(opts HostOptions) (mcp.Transport, error) {
	h.cmd = exec.Command(opts.Command[0], opts.Command[1:]...)
	h.cmd.Env = opts.Env
	h.cmd.Stderr = os.Stderr
	if opts.Stderr != nil {
		h.cmd.Stderr = opts.Stderr
		// The command's own children (upstreams) share the pipe; Wait
		// stops copying shortly after the command itself exits.
		h.cmd.WaitDelay = 5 * time.Second
	}
	stdin, err := h.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := h.cmd.Start(); err != nil {
		return nil, err
	}
	h.stdin = stdin
	return &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil
}

// PID is the process id of the command the host started (not for a host
// made by ConnectHTTP), for tests that inject faults into it.
func (h *Host) PID() int { return h.cmd.Process.Pid }

// Disconnect closes the command's stdin without a goodbye, as a host that
// crashed or quit would, and waits for the command to exit.
func (h *Host) Disconnect() error {
	_ = h.stdin.Close()
	return h.cmd.Wait()
}

func (h *Host) answerWith(answer Answer) func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	return func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		params, _ := json.Marshal(req.Params)
		select {
		case h.Asked <- params:
		default:
		}
		raw, err := answer(ctx, params)
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) {
				return nil, &jsonrpc.Error{Code: pe.Code, Message: pe.Message, Data: pe.Data}
			}
			return nil, err
		}
		var res mcp.CreateMessageWithToolsResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, err
		}
		return &res, nil
	}
}

// ToolResult is a tools/call result as the host saw it.
type ToolResult struct {
	Text       string          // the text blocks, joined
	Structured json.RawMessage // structuredContent, if any
	IsError    bool
}

// CallTool calls a tool; a JSON-RPC error comes back as *Error.
func (h *Host) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	return h.callTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func (h *Host) callTool(ctx context.Context, params *mcp.CallToolParams) (*ToolResult, error) {
	res, err := h.session.CallTool(ctx, params)
	if err != nil {
		return nil, asError(err)
	}
	out := &ToolResult{IsError: res.IsError}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			out.Text += t.Text
		}
	}
	if res.StructuredContent != nil {
		out.Structured, _ = json.Marshal(res.StructuredContent)
	}
	return out, nil
}

// Sample calls the peer upstream's `sample` tool with params and decodes
// what the upstream got back.
func (h *Host) Sample(ctx context.Context, params json.RawMessage) (*SampleOutcome, error) {
	return h.SampleWithMeta(ctx, params, nil)
}

// SampleRaw pushes raw as the exact params bytes of a sampling request
// through the peer upstream's `sample_raw` tool.
func (h *Host) SampleRaw(ctx context.Context, raw []byte) (*SampleOutcome, error) {
	return outcome(h.CallTool(ctx, "sample_raw", map[string]any{"raw_b64": base64.StdEncoding.EncodeToString(raw)}))
}

// outcome decodes what the peer upstream reports it got back from a
// sample tool's call.
func outcome(res *ToolResult, err error) (*SampleOutcome, error) {
	if err != nil {
		return nil, err
	}
	var out SampleOutcome
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ToolNames lists the tools the host sees.
func (h *Host) ToolNames(ctx context.Context) ([]string, error) {
	var names []string
	for t, err := range h.session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, t.Name)
	}
	return names, nil
}

// Close ends the session and waits for the subprocess to exit.
func (h *Host) Close() error {
	err := h.session.Close()
	_ = h.Disconnect()
	return err
}

// SampleInputRaw asks, through the peer upstream's `sample_input_raw`
// tool, for raw as the exact params bytes of a 2026-07-28 sampling input
// request. A refusal fails the host's call; it comes back as the outcome's
// error, as a refused push does.
func (h *Host) SampleInputRaw(ctx context.Context, raw []byte) (*SampleOutcome, error) {
	res, err := h.CallTool(ctx, "sample_input_raw", map[string]any{"raw_b64": base64.StdEncoding.EncodeToString(raw)})
	var pe *Error
	if errors.As(err, &pe) {
		return &SampleOutcome{Error: pe}, nil
	}
	if err != nil {
		return nil, err
	}
	var got InputOutcome
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil || len(got.Completions) == 0 {
		return nil, fmt.Errorf("sample_input_raw result %q: %v", res.Text, err)
	}
	return &SampleOutcome{Completion: got.Completions[0]}, nil
}
