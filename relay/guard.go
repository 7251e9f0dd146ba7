package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodCreateMessage is the legacy sampling request an upstream pushes.
const methodCreateMessage = "sampling/createMessage"

// screen judges the raw params of a sampling request; a non-nil error is the
// answer the upstream gets instead of any further processing.
type screen func(ctx context.Context, params json.RawMessage) *jsonrpc.Error

// guardedTransport wraps an upstream transport so that every sampling
// request the upstream sends is validated on the bytes it sent, before the
// SDK decodes them. Decoding is lossy (duplicate keys collapse, unknown
// fields vanish, some shapes are refused with the SDK's own messages), so
// strictness must come first; the typed handler then validates the
// canonical form it forwards.
type guardedTransport struct {
	mcp.Transport
	screen screen // pushes
	inputs screen // sampling entries of input_required results
}

func (t *guardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardedConn{Connection: c, screen: t.screen, inputs: t.inputs}, nil
}

// guardedConn answers refused sampling requests itself and hides them from
// the SDK; every other message passes unchanged.
type guardedConn struct {
	mcp.Connection
	screen screen
	inputs screen
}

func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			return c.screenInputs(ctx, resp), nil
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.Method != methodCreateMessage || !req.IsCall() {
			return msg, nil
		}
		werr := c.screen(ctx, req.Params)
		if werr == nil {
			return msg, nil
		}
		if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: werr}); err != nil {
			return nil, err
		}
	}
}

// screenInputs checks, on the bytes the upstream sent, every sampling entry
// of an input_required result (2026-07-28), as pushes are checked. A result
// with a refused entry becomes that refusal: the call fails with it and the
// upstream is not retried. Capability gates wait for the typed check, which
// knows the host of the call.
func (c *guardedConn) screenInputs(ctx context.Context, resp *jsonrpc.Response) jsonrpc.Message {
	if c.inputs == nil || resp.Error != nil || !bytes.Contains(resp.Result, []byte(`"input_required"`)) {
		return resp
	}
	var res struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
	}
	if json.Unmarshal(resp.Result, &res) != nil || res.ResultType != "input_required" {
		return resp // the SDK reports what it cannot decode
	}
	for _, key := range slices.Sorted(maps.Keys(res.InputRequests)) {
		in := res.InputRequests[key]
		if in.Method != methodCreateMessage {
			continue
		}
		if werr := c.inputs(ctx, in.Params); werr != nil {
			return &jsonrpc.Response{ID: resp.ID, Error: werr}
		}
	}
	return resp
}
