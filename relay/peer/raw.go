package peer

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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
// anything, so the test peer swaps the bytes in on the way out.
type rawParams struct {
	mu      sync.Mutex
	pending map[string]json.RawMessage
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

// swapTransport is the peer's server transport with raw params swapped in.
type swapTransport struct {
	mcp.Transport
	raw *rawParams
}

func (t *swapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &swapConn{Connection: c, raw: t.raw}, nil
}

type swapConn struct {
	mcp.Connection
	raw *rawParams
}

func (c *swapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Result != nil {
		msg = c.swapInputs(resp)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "sampling/createMessage" {
		var p struct {
			Meta map[string]string `json:"_meta"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.Meta[rawKey] != "" {
			if raw, ok := c.raw.take(p.Meta[rawKey]); ok {
				swapped := *req
				swapped.Params = raw
				msg = &swapped
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// sampleRaw pushes the base64-decoded bytes as the params of a sampling
// request, exactly as given.
func (r *rawParams) sampleRaw(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Raw string `json:"raw_b64"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sample_raw needs {raw_b64}"}
	}
	raw, err := base64.StdEncoding.DecodeString(args.Raw)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "raw_b64: " + err.Error()}
	}
	params := &mcp.CreateMessageWithToolsParams{Meta: mcp.Meta{rawKey: r.put(raw)}, MaxTokens: 1}
	return sampleResult(req.Session.CreateMessageWithTools(ctx, params)), nil
}

// swapInputs swaps raw params into the sampling entries of an
// input_required result, as Write does for pushes.
func (c *swapConn) swapInputs(resp *jsonrpc.Response) jsonrpc.Message {
	if shedding := shedResult(resp); shedding != nil {
		return shedding
	}
	var res map[string]json.RawMessage
	var reqs map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(resp.Result, &res) != nil || json.Unmarshal(res["inputRequests"], &reqs) != nil {
		return resp
	}
	swapped := false
	for key, in := range reqs {
		var p struct {
			Meta map[string]string `json:"_meta"`
		}
		if json.Unmarshal(in.Params, &p) != nil || p.Meta[rawKey] == "" {
			continue
		}
		if raw, ok := c.raw.take(p.Meta[rawKey]); ok {
			in.Params, swapped = raw, true
			reqs[key] = in
		}
	}
	if !swapped {
		return resp
	}
	res["inputRequests"], _ = json.Marshal(reqs)
	out := *resp
	out.Result, _ = json.Marshal(res)
	return &out
}

// sampleInputRaw asks for the base64-decoded bytes, exactly as given, as
// the params of a 2026-07-28 sampling input request (key "q"), once.
func (r *rawParams) sampleInputRaw(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Raw string `json:"raw_b64"`
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
		params := &mcp.CreateMessageWithToolsParams{Meta: mcp.Meta{rawKey: r.put(raw)}, MaxTokens: 1}
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
