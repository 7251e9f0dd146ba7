package peer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
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
// state. Its tools are RunUpstream's, and
// sample_standalone, which pushes outside the call: a push made inside a
// call travels on that call's response stream, one made outside it only on
// the client's standalone stream.
func ServeUpstreamHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	raw := &rawParams{pending: map[string]json.RawMessage{}}
	srv := httpServer(raw)
	get := func(*http.Request) *mcp.Server { return srv }
	modern := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	legacy := mcp.NewStreamableHTTPHandler(get, nil)
	name, value, _ := strings.Cut(opts.RequireHeader, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w = &swapWriter{ResponseWriter: w, raw: raw}
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

// httpServer is the test upstream, plus sample_standalone, which only
// means something over HTTP.
func httpServer(raw *rawParams) *mcp.Server {
	srv, _ := newServer(raw, UpstreamOptions{})
	srv.AddTool(&mcp.Tool{Name: "sample_standalone", Description: "Pushes the given sampling/createMessage params outside the call.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}`)}, sampleStandalone)
	return srv
}

// swapWriter swaps raw params into what the SDK writes on an HTTP
// response, as swapConn does on stdio. Over HTTP the SDK's server keeps its
// connections to itself, so the swap happens on the bytes: the SDK writes
// each event of a stream, and a JSON body, in one Write, so every Write
// holds whole messages.
type swapWriter struct {
	http.ResponseWriter
	raw *rawParams
}

func (w *swapWriter) Write(b []byte) (int, error) {
	out := b
	if bytes.Contains(b, []byte(rawKey)) {
		out = w.raw.swapFrame(b, strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream"))
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *swapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// swapFrame swaps raw params into a JSON body, or into the data lines of
// an event (the SDK writes each message on one line).
func (r *rawParams) swapFrame(b []byte, sse bool) []byte {
	if !sse {
		return r.swapMessage(b)
	}
	lines := bytes.Split(b, []byte{'\n'})
	for i, line := range lines {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			lines[i] = append([]byte("data: "), r.swapMessage(data)...)
		}
	}
	return bytes.Join(lines, []byte{'\n'})
}

// swapMessage runs one encoded message through swapConn.Write, the stdio
// peer's swap, and encodes what it would have sent.
func (r *rawParams) swapMessage(data []byte) []byte {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return data
	}
	var sent captureConn
	_ = (&swapConn{Connection: &sent, raw: r}).Write(context.Background(), msg)
	if sent.msg == msg {
		return data
	}
	out, err := jsonrpc.EncodeMessage(sent.msg)
	if err != nil {
		return data
	}
	return out
}

// captureConn keeps the message written to it; it is only ever written to.
type captureConn struct {
	mcp.Connection
	msg jsonrpc.Message
}

func (c *captureConn) Write(_ context.Context, msg jsonrpc.Message) error {
	c.msg = msg
	return nil
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
	h := &Host{Asked: make(chan json.RawMessage, 64), Elicited: make(chan json.RawMessage, 64)}
	copts := h.clientOptions(opts)
	version := opts.ProtocolVersion
	if version == "" {
		version = "2025-11-25"
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-fw-test-host", Version: "1"}, copts)
	client.AddReceivingMiddleware(h.inputsMiddleware(opts))
	h.addRoots(client, opts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
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

// StartUpstreamHTTP runs bin (the test upstream, testdata/upstream) with
// -http on a free loopback port and args, and returns its URL and a func
// that stops it.
func StartUpstreamHTTP(bin string, args ...string) (url string, stop func(), err error) {
	cmd := exec.Command(bin, append([]string{"-http", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("the upstream printed no URL: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}
