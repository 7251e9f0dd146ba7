package demopeer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostOptions configures the demo host.
type HostOptions struct {
	Command []string // started as a subprocess and spoken to over stdio
	Sample  Answer   // answers sampling/createMessage with a CreateMessageResult
	Elicit  Answer   // answers elicitation/create (form and url) with an ElicitResult
}

// Host is an MCP client acting as the host application, as of
// 2025-11-25: sampling and elicitation reach it as requests of their own.
type Host struct {
	session  *mcp.ClientSession
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	elicited atomic.Int64
}

// StartHost starts opts.Command and initializes a session with it.
func StartHost(ctx context.Context, opts HostOptions) (*Host, error) {
	h := &Host{}
	t, err := h.start(opts.Command)
	if err != nil {
		return nil, err
	}
	if err := h.connect(ctx, t, opts); err != nil {
		_ = h.stdin.Close()
		_ = h.cmd.Wait()
		return nil, err
	}
	return h, nil
}

// start runs the command with its stdin and stdout as the transport.
func (h *Host) start(command []string) (mcp.Transport, error) {
	h.cmd = exec.Command(command[0], command[1:]...)
	h.cmd.Stderr = os.Stderr
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

// connect declares sampling (with tools) and elicitation (form and url)
// and answers them with opts.
func (h *Host) connect(ctx context.Context, t mcp.Transport, opts HostOptions) error {
	caps := &mcp.ClientCapabilities{
		Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-fw-demo-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: caps,
		CreateMessageWithToolsHandler: func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return answer[mcp.CreateMessageWithToolsResult](ctx, opts.Sample, req.Params)
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.elicited.Add(1)
			return answer[mcp.ElicitResult](ctx, opts.Elicit, req.Params)
		},
	})
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	h.session = cs
	return err
}

// answer has fn answer params and decodes its answer as an R.
func answer[R any](ctx context.Context, fn Answer, params any) (*R, error) {
	raw, _ := json.Marshal(params)
	out, err := fn(ctx, raw)
	if err != nil {
		return nil, err
	}
	var res R
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Sample has the upstream push params as a sampling/createMessage request
// and returns what it got back.
func (h *Host) Sample(ctx context.Context, params json.RawMessage) (*Outcome, error) {
	return h.push(ctx, "sample", params)
}

// Elicit has the upstream push params as an elicitation/create request
// and returns what it got back.
func (h *Host) Elicit(ctx context.Context, params json.RawMessage) (*Outcome, error) {
	return h.push(ctx, "elicit", params)
}

func (h *Host) push(ctx context.Context, tool string, params json.RawMessage) (*Outcome, error) {
	res, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"params": params}})
	if err != nil {
		return nil, err
	}
	if len(res.Content) != 1 {
		return nil, fmt.Errorf("%s: %d content blocks, want one", tool, len(res.Content))
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	var o Outcome
	if text == nil || json.Unmarshal([]byte(text.Text), &o) != nil {
		return nil, fmt.Errorf("%s: the result is not an outcome (error: %v)", tool, res.IsError)
	}
	return &o, nil
}

// Elicited is how many elicitations have reached this host, that is,
// how many times the user was asked.
func (h *Host) Elicited() int { return int(h.elicited.Load()) }

// Close ends the session and waits for the command to exit.
func (h *Host) Close() error {
	err := h.session.Close()
	_ = h.stdin.Close()
	_ = h.cmd.Wait()
	return err
}
