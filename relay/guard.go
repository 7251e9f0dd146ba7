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

// guard is the raw screening of what an upstream sends, shared by both
// ways of reaching one: guardedConn applies it to the messages of a
// command upstream, screeningTransport to the response bodies of an HTTP
// upstream. Both decode with the SDK's own decoder, so the guard judges
// exactly the message the SDK would act on.
type guard struct {
	screen screen // pushes
	inputs screen // sampling entries of input_required results
}

// judgement is what becomes of one message from an upstream. With neither
// field set it passes unchanged.
type judgement struct {
	answer  *jsonrpc.Response // a refused push: the upstream gets this, the SDK nothing
	replace *jsonrpc.Response // a refused input_required result: the SDK gets this instead
}

// judge screens msg on the bytes the upstream sent: a sampling push, or
// the sampling entries of an input_required result. Anything else passes.
func (g guard) judge(ctx context.Context, msg jsonrpc.Message) judgement {
	switch msg := msg.(type) {
	case *jsonrpc.Response:
		if werr := g.refusedInputs(ctx, msg); werr != nil {
			return judgement{replace: &jsonrpc.Response{ID: msg.ID, Error: werr}}
		}
	case *jsonrpc.Request:
		if g.screen == nil || msg.Method != methodCreateMessage || !msg.IsCall() {
			break
		}
		if werr := g.screen(ctx, msg.Params); werr != nil {
			return judgement{answer: &jsonrpc.Response{ID: msg.ID, Error: werr}}
		}
	}
	return judgement{}
}

// guardedTransport wraps an upstream transport so that every sampling
// request the upstream sends is validated on the bytes it sent, before the
// SDK decodes them. Decoding is lossy (duplicate keys collapse, unknown
// fields vanish, some shapes are refused with the SDK's own messages), so
// strictness must come first; the typed handler then validates the
// canonical form it forwards. It is for command upstreams only: wrapping
// the SDK's HTTP connection would hide its session hooks (see
// screeningTransport).
type guardedTransport struct {
	mcp.Transport
	guard
}

func (t *guardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardedConn{Connection: c, guard: t.guard}, nil
}

// guardedConn answers refused sampling requests itself and hides them from
// the SDK; every other message passes unchanged.
type guardedConn struct {
	mcp.Connection
	guard
}

func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		j := c.judge(ctx, msg)
		switch {
		case j.replace != nil:
			return j.replace, nil
		case j.answer == nil:
			return msg, nil
		}
		if err := c.Connection.Write(ctx, j.answer); err != nil {
			return nil, err
		}
	}
}

// refusedInputs checks, on the bytes the upstream sent, every sampling
// entry of an input_required result (2026-07-28), as pushes are checked,
// and returns the first refusal. A result with a refused entry becomes that
// refusal: the call fails with it and the upstream is not retried.
// Capability gates wait for the typed check, which knows the host of the
// call.
func (g guard) refusedInputs(ctx context.Context, resp *jsonrpc.Response) *jsonrpc.Error {
	if g.inputs == nil || resp.Error != nil || !mayNeedInput(resp.Result) {
		return nil
	}
	var res struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
	}
	if json.Unmarshal(resp.Result, &res) != nil || res.ResultType != "input_required" {
		return nil // the SDK reports what it cannot decode
	}
	for _, key := range slices.Sorted(maps.Keys(res.InputRequests)) {
		in := res.InputRequests[key]
		if in.Method != methodCreateMessage {
			continue
		}
		if werr := g.inputs(ctx, in.Params); werr != nil {
			return werr
		}
	}
	return nil
}

// mayNeedInput is a fast pre-check on a result's bytes: only one that says
// input_required, literally or behind a JSON escape (which both decoders
// resolve, so "input\u005frequired" must not slip past), is decoded.
func mayNeedInput(result []byte) bool {
	return bytes.Contains(result, []byte("input_required")) || bytes.Contains(result, []byte(`\u`))
}
