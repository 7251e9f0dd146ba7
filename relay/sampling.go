package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// onSampling is the firewall for a sampling request pushed by an upstream
// (protocol revisions up to 2025-11-25). It reads like the pipeline of
// DESIGN §2: decide the request, ask the host, check the completion.
// Every refusal leaves as a *jsonrpc.Error built by wireError, never as a
// plain Go error (which the SDK would send with code 0).
func (p *Proxy) onSampling(ctx context.Context, u *upstream, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	params := forwardable(req.Params)
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, internalError("sampling request could not be encoded")
	}
	s := p.sampling(u, raw)
	if v := p.settle(ctx, s, nil, p.eng.Decide(ctx, s)); v.Outcome != engine.OutcomePass {
		return nil, wireError(v)
	}
	res, err := p.askHost(ctx, params)
	if err != nil {
		return nil, err
	}
	rawRes, err := json.Marshal(res)
	if err != nil {
		return nil, internalError("host completion could not be encoded")
	}
	if v := p.settle(ctx, s, rawRes, p.eng.Check(ctx, s, rawRes)); v.Outcome != engine.OutcomePass {
		return nil, wireError(v)
	}
	return res, nil
}

// forwardable is the request as it will be sent to the host: the upstream's
// _meta (progress tokens, protocol keys) describes its own hop and is
// dropped, so the bytes validated are exactly the bytes forwarded.
func forwardable(in *mcp.CreateMessageWithToolsParams) *mcp.CreateMessageWithToolsParams {
	out := *in
	out.Meta = nil
	return &out
}

// sampling describes one request for the engine.
func (p *Proxy) sampling(u *upstream, raw []byte) engine.Sampling {
	_, hostCaps, hostEra := p.hostSession()
	return engine.Sampling{
		Server: engine.Server{Name: u.cfg.Name, Label: u.cfg.Label, Protocol: u.era, Reported: u.reported()},
		Host:   engine.Host{Protocol: hostEra, Capabilities: jsonObject(hostCaps)},
		Origin: u.origin(),
		Caps:   u.caps,
		Params: raw,
	}
}

// askHost sends the request to the host's model with a deadline. A host
// rejection (-1) is relayed as the host sent it; any other failure is an
// internal error, since nobody said no.
func (p *Proxy) askHost(ctx context.Context, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	host, _, _ := p.hostSession()
	if host == nil {
		return nil, internalError("no host can answer sampling requests")
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.HostTimeout)
	defer cancel()
	res, err := host.CreateMessageWithTools(ctx, params)
	if err == nil {
		return &mcp.CreateMessageWithToolsResult{Role: res.Role, Content: res.Content, Model: res.Model, StopReason: res.StopReason}, nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == codeUserRejected {
		return nil, we
	}
	p.log.Warn("host sampling failed", zap.Error(err))
	return nil, internalError(fmt.Sprintf("host sampling failed: %s", hostFailure(err, we)))
}

func hostFailure(err error, we *jsonrpc.Error) string {
	if we != nil {
		return fmt.Sprintf("code %d", we.Code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer before the deadline"
	}
	return "the host could not be reached"
}

func jsonObject(v any) map[string]any {
	m := map[string]any{}
	b, err := json.Marshal(v)
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}
