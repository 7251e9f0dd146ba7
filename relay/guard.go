package relay

import (
	"context"
	"encoding/json"

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
	screen screen
}

func (t *guardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardedConn{Connection: c, screen: t.screen}, nil
}

// guardedConn answers refused sampling requests itself and hides them from
// the SDK; every other message passes unchanged.
type guardedConn struct {
	mcp.Connection
	screen screen
}

func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
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
