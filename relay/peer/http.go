package peer

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configures ServeUpstreamHTTP.
type HTTPOptions struct {
	// RequireHeader, "Name: value", refuses with 401 every request that does
	// not carry that header with that value, so a test sees a configured
	// header reach the upstream on every request.
	RequireHeader string
}

// ServeUpstreamHTTP serves the test upstream's sampling tools over
// streamable HTTP, at / and /mcp on ln, until ctx ends, the way a Go SDK
// server is served: 2026-07-28 requests statelessly, older sessions with
// state (SPEC-NOTES §8). Its tools: sample, sample_input, echo and
// client_info as RunUpstream has them, and sample_standalone, which pushes
// outside the call: a push made inside a call travels on that call's
// response stream, one made outside it only on the client's standalone
// stream.
func ServeUpstreamHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	srv := httpServer()
	get := func(*http.Request) *mcp.Server { return srv }
	modern := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	legacy := mcp.NewStreamableHTTPHandler(get, nil)
	name, value, _ := strings.Cut(opts.RequireHeader, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case name != "" && r.Header.Get(name) != value:
			http.Error(w, "missing or wrong "+name+" header", http.StatusUnauthorized)
		case r.Header.Get("MCP-Protocol-Version") >= "2026-07-28":
			modern.ServeHTTP(w, r)
		default:
			legacy.ServeHTTP(w, r)
		}
	})
	mux := http.NewServeMux()
	mux.Handle("/{$}", h)
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpServer is the test upstream with the tools HTTP tests use. The
// handlers are RunUpstream's own; RunUpstream builds its server inline, so
// the registrations are repeated here.
func httpServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpx-fw-peer", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "sample", Description: "Pushes the given sampling/createMessage params to the client.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}`)}, sample)
	srv.AddTool(&mcp.Tool{Name: "sample_standalone", Description: "Pushes the given sampling/createMessage params outside the call.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}`)}, sampleStandalone)
	srv.AddTool(&mcp.Tool{Name: "sample_input", Description: "Asks for the given sampling params as a 2026-07-28 input request, rounds times.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"},"rounds":{"type":"integer"}},"required":["params"]}`)}, sampleInput)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Returns its text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}, echo)
	srv.AddTool(&mcp.Tool{Name: "client_info", Description: "Reports the protocol version and capabilities its client declared.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, clientInfo)
	return srv
}

// sampleStandalone pushes params as sample does, but with a context of its
// own, as a server does for work it started itself: the SDK then sends the
// push on the client's standalone stream, not on the call's.
func sampleStandalone(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Params mcp.CreateMessageWithToolsParams `json:"params"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sample_standalone needs {params}: " + err.Error()}
	}
	own, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return sampleResult(req.Session.CreateMessageWithTools(own, &args.Params)), nil
}

// HTTPHost is a test host connected to an MCP endpoint over streamable
// HTTP; it has Host's methods, and nothing to stop on Close.
type HTTPHost struct {
	*Host
}

// ConnectHTTP connects a host to url as opts describes (Command and Env are
// not used). Several may share one url, each with its own session.
func ConnectHTTP(ctx context.Context, url string, opts HostOptions) (*HTTPHost, error) {
	h := &Host{Asked: make(chan json.RawMessage, 64)}
	copts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	if opts.Answer != nil {
		copts.Capabilities.Sampling = &mcp.SamplingCapabilities{}
		if opts.Tools {
			copts.Capabilities.Sampling.Tools = &mcp.SamplingToolsCapabilities{}
		}
		if opts.Context {
			copts.Capabilities.Sampling.Context = &mcp.SamplingContextCapabilities{}
		}
		copts.CreateMessageWithToolsHandler = h.answerWith(opts.Answer)
	}
	version := opts.ProtocolVersion
	if version == "" {
		version = "2025-11-25"
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpx-fw-test-host", Version: "1"}, copts).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	h.session = cs
	return &HTTPHost{Host: h}, nil
}

// ProtocolVersion is the revision the host and the endpoint agreed on.
func (h *HTTPHost) ProtocolVersion() string { return h.session.InitializeResult().ProtocolVersion }

// Close ends the session (a DELETE for a legacy one).
func (h *HTTPHost) Close() error { return h.session.Close() }
