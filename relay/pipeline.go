package relay

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// source is who makes a request of the host h, for the pipeline: the
// upstream u as the engine reads it and as the limits count it (its
// link's host session), the origin o when the caller knows it (else u's
// guess), and h's asker.
func (p *Proxy) source(u *upstream, h hostView, o engine.Origin) *pipeline.Source {
	src := &pipeline.Source{
		Server:         engine.Server{Name: u.cfg.Name, Label: u.cfg.Label, Era: u.era, Reported: u.reported()},
		Caps:           u.capsFor(h),
		Host:           engine.Host{Era: h.era, Capabilities: h.capabilities()},
		HostCaps:       h.caps,
		HostKey:        hostKey(u.link.host),
		Origin:         o,
		Guess:          u.origin,
		OperatorAnswer: u.cfg.OperatorAnswer,
		RootsAllow:     u.cfg.Roots.Allow,
		Parent:         pushParent,
		Hold:           p.holdCalls,
	}
	if h.session != nil && !h.modern() {
		src.Asker = sessionAsker{host: h.session, streams: &p.streams}
	}
	return src
}

// sessionAsker asks a host older than 2026-07-28 by push, on its session;
// streams says when an HTTP host opens its standalone stream.
type sessionAsker struct {
	host    *mcp.ServerSession
	streams *hostStreams
}

// Ask asks the host for k's answer on the stream hostStream picks; a push
// the SDK's HTTP transport refused to write (the call whose stream it
// took ended meanwhile) is sent again on the host's standalone stream
// (standalone).
func (a sessionAsker) Ask(ctx context.Context, k *pipeline.Kind, params mcp.InputRequest) (mcp.InputResponse, error) {
	res, err := a.ask(hostStream(ctx, false), k, params)
	if undelivered(err) {
		res, err = a.standalone(ctx, k, params)
	}
	return res, err
}

// ask sends one request of kind k and reads the answer as k's one result
// type.
func (a sessionAsker) ask(ctx context.Context, k *pipeline.Kind, params mcp.InputRequest) (mcp.InputResponse, error) {
	switch k {
	case pipeline.Sampling:
		res, err := a.host.CreateMessageWithTools(ctx, params.(*mcp.CreateMessageWithToolsParams))
		if err != nil {
			return nil, err
		}
		return &mcp.CreateMessageWithToolsResult{Role: res.Role, Content: res.Content, Model: res.Model, StopReason: res.StopReason}, nil
	case pipeline.Elicitation:
		res, err := elicitHost(ctx, a.host, params.(*mcp.ElicitParams))
		if err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: res.Action, Content: res.Content}, nil
	case pipeline.Roots:
		res, err := a.host.ListRoots(ctx, &mcp.ListRootsParams{})
		if err != nil {
			return nil, err
		}
		return &mcp.ListRootsResult{Roots: res.Roots}, nil
	}
	return nil, refusal.Internal("no host asks for " + refusal.KindNoun(k.Name))
}

// resultAs is a pipeline's answer in the type its SDK handler returns.
func resultAs[T mcp.InputResponse](res mcp.InputResponse, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	r, ok := res.(T)
	if !ok {
		return zero, refusal.Internal("answer could not be returned")
	}
	return r, nil
}
