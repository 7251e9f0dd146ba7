package peer

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawKey marks, in a sampling request's _meta, which stored raw params the
// outgoing frame must carry instead of what the SDK encoded.
const rawKey = "mcpx-fw.peer/raw"

// rawParams holds raw sampling params waiting to be sent, by token. The SDK
// can only send what its types can express; a hostile upstream sends
// anything, so the test peer swaps the bytes in on the way out. Over stdio
// the swap happens on the encoded frame, so the params go out byte for
// byte (the SDK's encoder would compact them, and cannot encode params
// nested past its depth limit at all); over HTTP they go out compacted.
type rawParams struct {
	mu      sync.Mutex
	pending map[string]json.RawMessage
	wire    map[string]json.RawMessage // params to write in place of a wire marker
	extra   map[string]string          // members to add to an input_required result
	whole   map[string]bool            // tokens whose raw bytes are a whole input request entry
	conn    mcp.Connection             // the stdio connection, for notify_raw
}

func (r *rawParams) put(raw json.RawMessage) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending[token] = raw
	return token
}

func (r *rawParams) take(token string) (json.RawMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	raw, ok := r.pending[token]
	delete(r.pending, token)
	return raw, ok
}

// wireMarker is the JSON string the SDK encodes in place of raw params
// that exactWriter then swaps for the params' exact bytes.
const wireMarker = "mcpx-fw.peer/wire:"

// marker parks raw for exactWriter and returns the JSON string it replaces.
func (r *rawParams) marker(raw json.RawMessage) json.RawMessage {
	var b [8]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wire == nil {
		r.wire = map[string]json.RawMessage{}
	}
	r.wire[token] = raw
	return json.RawMessage(`"` + wireMarker + token + `"`)
}

// unmark takes the params parked under a marker's token.
func (r *rawParams) unmark(token string) (json.RawMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	raw, ok := r.wire[token]
	delete(r.wire, token)
	return raw, ok
}

// putExtra keeps members to add to the input_required result that carries
// the params of token.
func (r *rawParams) putExtra(token, members string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.extra == nil {
		r.extra = map[string]string{}
	}
	r.extra[token] = members
}

// putWhole parks raw as a whole input request entry, member names as
// written, to go out in place of the entry whose params name the token.
func (r *rawParams) putWhole(raw json.RawMessage) string {
	token := r.put(raw)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.whole == nil {
		r.whole = map[string]bool{}
	}
	r.whole[token] = true
	return token
}

// takeWhole reports whether token's raw bytes are a whole entry.
func (r *rawParams) takeWhole(token string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	whole := r.whole[token]
	delete(r.whole, token)
	return whole
}

func (r *rawParams) takeExtra(token string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	members := r.extra[token]
	delete(r.extra, token)
	return members
}

// exactWriter writes the peer's stdio frames, each in one Write, with
// every wire marker replaced by the exact params parked under it.
type exactWriter struct {
	io.WriteCloser
	raw *rawParams
}

func (w *exactWriter) Write(frame []byte) (int, error) {
	quoted := []byte(`"` + wireMarker)
	if !bytes.Contains(frame, quoted) {
		return w.WriteCloser.Write(frame)
	}
	var out []byte
	rest := frame
	for {
		i := bytes.Index(rest, quoted)
		if i < 0 {
			break
		}
		start := i + len(quoted)
		end := bytes.IndexByte(rest[start:], '"')
		if end < 0 {
			break
		}
		raw, ok := w.raw.unmark(string(rest[start : start+end]))
		if !ok {
			break
		}
		out = append(append(out, rest[:i]...), raw...)
		rest = rest[start+end+1:]
	}
	if _, err := w.WriteCloser.Write(append(out, rest...)); err != nil {
		return 0, err
	}
	return len(frame), nil
}

// swapTransport is the peer's server transport with raw params swapped in.
type swapTransport struct {
	mcp.Transport
	raw *rawParams
}

func (t *swapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	inner, exact := t.Transport, false
	if it, ok := inner.(*mcp.IOTransport); ok {
		stdio := *it
		stdio.Writer, exact = &exactWriter{WriteCloser: it.Writer, raw: t.raw}, true
		inner = &stdio
	}
	c, err := inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.raw.mu.Lock()
	t.raw.conn = c
	t.raw.mu.Unlock()
	return &swapConn{Connection: c, raw: t.raw, exact: exact}, nil
}

type swapConn struct {
	mcp.Connection
	raw   *rawParams
	exact bool // frames pass an exactWriter: swap in markers, not the params
}

// Read logs each message the peer reads, its members in the order they
// came, to the file MCPXFW_PEER_WIRE names, if any: tests read there the
// order of the answers the peer got, which its reports re-encode.
func (c *swapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if path := os.Getenv("MCPXFW_PEER_WIRE"); err == nil && path != "" {
		if b, err := jsonrpc.EncodeMessage(msg); err == nil {
			appendLine(path, string(b))
		}
	}
	return msg, err
}

// swapIn is what goes in place of raw params in a message: the params, or
// a marker that exactWriter swaps for them byte for byte.
func (c *swapConn) swapIn(raw json.RawMessage) json.RawMessage {
	if c.exact {
		return c.raw.marker(raw)
	}
	return raw
}

func (c *swapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Result != nil {
		msg = c.swapInputs(resp)
		if swapped := c.swapResult(resp); swapped != nil {
			msg = swapped
		}
	}
	if req, ok := msg.(*jsonrpc.Request); ok && (req.Method == "sampling/createMessage" || req.Method == "elicitation/create") {
		var p struct {
			Meta map[string]string `json:"_meta"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.Meta[rawKey] != "" {
			if raw, ok := c.raw.take(p.Meta[rawKey]); ok {
				swapped := *req
				swapped.Params = c.swapIn(raw)
				msg = &swapped
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// rawArgument is the bytes a *_raw tool was given, base64-decoded from
// its raw_b64 argument.
func rawArgument(req *mcp.CallToolRequest) ([]byte, error) {
	var args struct {
		Raw string `json:"raw_b64"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: req.Params.Name + " needs {raw_b64}"}
	}
	raw, err := base64.StdEncoding.DecodeString(args.Raw)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "raw_b64: " + err.Error()}
	}
	return raw, nil
}

// sampleRaw pushes the base64-decoded bytes as the params of a sampling
// request, exactly as given.
func (r *rawParams) sampleRaw(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, err := rawArgument(req)
	if err != nil {
		return nil, err
	}
	params := &mcp.CreateMessageWithToolsParams{Meta: mcp.Meta{rawKey: r.put(raw)}, MaxTokens: 1}
	return sampleResult(req.Session.CreateMessageWithTools(ctx, params)), nil
}

// swapInputs swaps raw params into the sampling entries of an
// input_required result, as Write does for pushes, and adds the members
// sample_input_raw was given for the result, as they were given.
func (c *swapConn) swapInputs(resp *jsonrpc.Response) jsonrpc.Message {
	if shedding := shedResult(resp); shedding != nil {
		return shedding
	}
	var res map[string]json.RawMessage
	var reqs map[string]json.RawMessage
	if json.Unmarshal(resp.Result, &res) != nil || json.Unmarshal(res["inputRequests"], &reqs) != nil {
		return resp
	}
	swapped, extra := false, ""
	for key, entry := range reqs {
		var in struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params,omitempty"` // none: swapped for nothing (roots_input)
		}
		var p struct {
			Meta map[string]string `json:"_meta"`
		}
		if json.Unmarshal(entry, &in) != nil || json.Unmarshal(in.Params, &p) != nil || p.Meta[rawKey] == "" {
			continue
		}
		token := p.Meta[rawKey]
		raw, ok := c.raw.take(token)
		switch {
		case !ok:
			continue
		case c.raw.takeWhole(token):
			reqs[key] = c.swapIn(raw)
		case raw == nil:
			in.Params = nil
			reqs[key] = marshalExact(in)
		default:
			in.Params = c.swapIn(raw)
			reqs[key] = marshalExact(in)
			extra += c.raw.takeExtra(token)
		}
		swapped = true
	}
	if !swapped {
		return resp
	}
	res["inputRequests"] = marshalExact(reqs)
	out := *resp
	out.Result = marshalExact(res)
	if extra != "" {
		out.Result = append(append(bytes.TrimSuffix(out.Result, []byte("}")), ","+extra...), '}')
	}
	return &out
}

// marshalExact encodes v without escaping <, > and &, so raw params keep
// their bytes (the SDK's own encoder escapes nothing either).
func marshalExact(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// sampleInputRaw asks for the base64-decoded bytes, exactly as given, as
// the params of a 2026-07-28 sampling input request (key "q"), once. With
// result_extra (JSON object members, as text) the input_required result
// carries those members too, as written: a result that says two things
// about itself.
func (r *rawParams) sampleInputRaw(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Raw   string `json:"raw_b64"`
		Extra string `json:"result_extra"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sample_input_raw needs {raw_b64}"}
	}
	raw, err := base64.StdEncoding.DecodeString(args.Raw)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "raw_b64: " + err.Error()}
	}
	done, err := answered(req.Params)
	if err != nil {
		return nil, err
	}
	if len(done.Completions) == 0 {
		token := r.put(raw)
		if args.Extra != "" {
			r.putExtra(token, args.Extra)
		}
		params := &mcp.CreateMessageWithToolsParams{Meta: mcp.Meta{rawKey: token}, MaxTokens: 1}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": params}, RequestState: encodeProgress(done, 1)}, nil
	}
	text, _ := json.Marshal(done)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: done}, nil
}

// shedResult marks a result whose requestState is a shed marker as
// input_required, making it the load-shedding answer of the 2026-07-28
// revision: a requestState and no input requests.
func shedResult(resp *jsonrpc.Response) *jsonrpc.Response {
	var res struct {
		RequestState string `json:"requestState"`
	}
	if json.Unmarshal(resp.Result, &res) != nil || !strings.HasPrefix(res.RequestState, shedPrefix) {
		return nil
	}
	out := *resp
	out.Result, _ = json.Marshal(map[string]string{"resultType": "input_required", "requestState": res.RequestState})
	return &out
}
