package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// inSentOrder is a push or an input request u sent, as the SDK decoded
// it, with its free-form values back in the member order the upstream
// wrote them (pipeline.InOrderOf): the params of the push in flight, or
// of a recent input request, that decode to in. Without one in stays as
// decoded. What it finds is kept for the host-facing server
// (sendInSentOrder, inputsInSentOrder), which sends the whole request in
// the upstream's order. The params found are returned too: an operator's
// edit of the request takes its order from them (editInSentOrder).
func (p *Proxy) inSentOrder(u *upstream, in mcp.InputRequest) (mcp.InputRequest, []byte) {
	want, err := json.Marshal(in)
	if err != nil {
		return in, nil
	}
	sent := u.held.sentParams(func(params json.RawMessage) bool { return decodesTo(params, in, want) })
	if sent == nil {
		sent = u.inputs.find(in)
	}
	if sent == nil {
		return in, nil
	}
	p.sent.keep(sent)
	return pipeline.InOrderOf(in, sent), sent
}

// pushInSentOrder is inSentOrder for a push u sent: with only one push in
// flight, that push's params are the ones in was decoded from, and are not
// decoded again to find them.
func (p *Proxy) pushInSentOrder(u *upstream, in mcp.InputRequest) (mcp.InputRequest, []byte) {
	sent, ok := u.held.only()
	if !ok || sent == nil {
		return p.inSentOrder(u, in)
	}
	p.sent.keep(sent)
	return pipeline.InOrderOf(in, sent), sent
}

// sentKey carries, in the context of a request the pipeline asks the
// host itself, the params its upstream sent (withSent).
type sentKey struct{}

// withSent is ctx carrying sent, the params of the one request asked in it.
func withSent(ctx context.Context, sent []byte) context.Context {
	return context.WithValue(ctx, sentKey{}, sent)
}

// sentIn is the params withSent put in ctx, or nil.
func sentIn(ctx context.Context) []byte {
	sent, _ := ctx.Value(sentKey{}).([]byte)
	return sent
}

// editInSentOrder keeps params, a request cleared for the host, in the
// member order of sent, the params its upstream sent, when p.sent has no
// value they decode from: an operator edited them. Every member the edit
// left as it was then crosses in the upstream's order, the edited ones
// where the upstream had them; only the order comes from sent, and none
// for the free-form values the edit orders itself (pipeline.EditOrder).
func (p *Proxy) editInSentOrder(params mcp.InputRequest, sent []byte) {
	if sent == nil || p.sent.find(params) != nil {
		return
	}
	if b, err := json.Marshal(params); err == nil {
		p.sent.keep(rawjson.InOrderOf(b, pipeline.EditOrder(sent)))
	}
}

// decodesTo reports whether params, decoded into in's type, encode as want.
func decodesTo(params json.RawMessage, in mcp.InputRequest, want []byte) bool {
	t := reflect.TypeOf(in)
	if t == nil || t.Kind() != reflect.Pointer {
		return false
	}
	v := reflect.New(t.Elem()).Interface()
	if json.Unmarshal(params, v) != nil {
		return false
	}
	got, err := json.Marshal(v)
	return err == nil && bytes.Equal(got, want)
}

// orderedParams is a request's params that encode with their members in
// the order of the upstream's request they pass on: judged, when it is
// not nil, is their encoding already made (pipeline.Judged).
type orderedParams struct {
	mcp.Params
	order, judged []byte
}

func (r *orderedParams) MarshalJSON() ([]byte, error) {
	if r.judged != nil {
		return rawjson.InOrderOf(r.judged, r.order), nil
	}
	return marshalInOrder(r.Params, r.order)
}

// sendInSentOrder is the host-facing server's innermost sending
// middleware: a request of a kind relayed to a host goes out with its
// members in the order its upstream wrote them (a sampling request's
// messages as well as its free-form values): the params the push asked in
// ctx was decoded from when no operator edited it (pipeline.Unedited),
// else one the firewall keeps (Proxy.sent). An unedited request goes out
// as the bytes the engine judged, in that order.
func (p *Proxy) sendInSentOrder(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.ServerRequest[mcp.Params]); ok && pipeline.Relayed(method) != nil && r.Params != nil {
			order := sentIn(ctx)
			if order == nil || !pipeline.Unedited(ctx) {
				order = p.sent.find(r.Params)
			}
			if order == nil {
				order = pipeline.EditOrder(sentIn(ctx)) // an operator's edit of the request asked in ctx
			}
			if order != nil {
				r.Params = &orderedParams{r.Params, order, pipeline.Judged(ctx, r.Params)}
			}
		}
		return next(ctx, method, req)
	}
}

// inputsInSentOrder is the host-facing server's outermost receiving
// middleware: a result that hands a 2026-07-28 host input requests
// encodes each in the order its upstream wrote it.
func (p *Proxy) inputsInSentOrder(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		if order := p.inputsOrder(inputRequestsOf(res)); order != nil {
			return &orderedResult{res, order}, nil
		}
		return res, nil
	}
}

// inputsOrder is the order of reqs as their upstreams wrote them, as the
// JSON of a result ({"inputRequests":{key:{"params":…}}}) whose only use is
// to give rawjson.InOrderOf the order; nil when none is kept.
func (p *Proxy) inputsOrder(reqs mcp.InputRequestMap) []byte {
	entries := map[string]json.RawMessage{}
	for key, in := range reqs {
		if order := p.sent.find(in); order != nil {
			entries[key], _ = json.Marshal(map[string]json.RawMessage{"params": order})
		}
	}
	if len(entries) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"inputRequests": entries})
	return b
}

// inputRequestsOf is the input requests a result hands the host, if any.
func inputRequestsOf(res mcp.Result) mcp.InputRequestMap {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests
	case *mcp.GetPromptResult:
		return r.InputRequests
	case *mcp.ReadResourceResult:
		return r.InputRequests
	}
	return nil
}
