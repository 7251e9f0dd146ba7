package relay

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// onSampling is the firewall for a sampling request pushed by an upstream
// (protocol revisions up to 2025-11-25): the pipeline (package pipeline)
// for the sampling kind. Every refusal leaves as a
// *jsonrpc.Error built by refusal.ForSampling, never as a plain Go error (which the
// SDK would send with code 0).
func (p *Proxy) onSampling(ctx context.Context, u *upstream, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	params, sent := p.pushInSentOrder(u, req.Params)
	ctx = withSent(ctx, sent)
	if u.link.bridge != nil {
		res, err := p.bridgePush(ctx, u, pipeline.Sampling, params)
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
	res, err := p.pipe.Run(ctx, p.source(u, u.link.host, engine.Origin{}), pipeline.Sampling, params)
	if err != nil {
		return nil, err
	}
	return res.(*mcp.CreateMessageWithToolsResult), nil
}

// undelivered reports a push the SDK's HTTP transport refused to write:
// the host never saw it, so it may be sent again.
func undelivered(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == refusal.CodeRejectedByTransport
}

func jsonObject(v any) map[string]any {
	m := map[string]any{}
	b, err := json.Marshal(v)
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}
