package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// onSampling is the firewall for a sampling request pushed by an upstream
// (protocol revisions up to 2025-11-25): the pipeline of DESIGN §2
// (pipeline.go) for the sampling kind. Every refusal leaves as a
// *jsonrpc.Error built by refusal.ForSampling, never as a plain Go error (which the
// SDK would send with code 0).
func (p *Proxy) onSampling(ctx context.Context, u *upstream, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	if u.link.bridge != nil {
		res, err := p.bridgePush(ctx, u, samplingKind, req.Params)
		if err != nil {
			return nil, err
		}
		return res.(*mcp.CreateMessageWithToolsResult), nil
	}
	if u.link.shared && !u.cfg.OperatorAnswer {
		return nil, p.noHost(u, "a push outside any bridged call of a 2026-07-28 host")
	}
	ctx, cancel := u.link.whileAlive(fromUpstream(ctx, u))
	defer cancel()
	res, err := p.firewall(ctx, u, u.link.host, engine.Origin{}, samplingKind, req.Params)
	if err != nil {
		return nil, err
	}
	return res.(*mcp.CreateMessageWithToolsResult), nil
}

// forwardable is the request as it will be sent to the host: the upstream's
// _meta (progress tokens, protocol keys) describes its own hop and is
// dropped, so the bytes validated are exactly the bytes forwarded.
func forwardable(in *mcp.CreateMessageWithToolsParams) *mcp.CreateMessageWithToolsParams {
	out := *in
	out.Meta = nil
	return &out
}

// undelivered reports a push the SDK's HTTP transport refused to write:
// the host never saw it, so it may be sent again.
func undelivered(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == refusal.CodeRejectedByTransport
}

// encode is json.Marshal without HTML escaping: the bytes the engine
// judges (and measures against limits.max_bytes) must not grow six-fold
// for every '<' an upstream sends. The SDK's types marshal their parts
// with json.Marshal, which escapes, so the escapes are undone after.
func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return unescapeHTML(b), nil
}

// unescapeHTML turns encoding/json's \u003c, \u003e and \u0026 back into
// the characters. Every other escape is copied whole, so the backslash of
// an escaped backslash never starts a false match.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if c, ok := htmlEscapes[string(b[i+1:min(i+6, len(b))])]; ok {
			out, i = append(out, c), i+5
			continue
		}
		out, i = append(out, b[i], b[i+1]), i+1
	}
	return out
}

var htmlEscapes = map[string]byte{"u003c": '<', "u003e": '>', "u0026": '&'}

func jsonObject(v any) map[string]any {
	m := map[string]any{}
	b, err := json.Marshal(v)
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}
