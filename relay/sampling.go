package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// onSampling is the firewall for a sampling request pushed by an upstream
// (protocol revisions up to 2025-11-25). It reads like the pipeline of
// DESIGN §2: decide the request, get a completion (from the host's model,
// or from an operator), check the completion. Every refusal leaves as a
// *jsonrpc.Error built by wireError, never as a plain Go error (which the
// SDK would send with code 0).
func (p *Proxy) onSampling(ctx context.Context, u *upstream, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	if u.link.bridge != nil {
		return p.bridgePush(ctx, u, req.Params)
	}
	if u.link.shared && !u.cfg.OperatorAnswer {
		return nil, p.noHost(u, "a push outside any bridged call of a 2026-07-28 host")
	}
	ctx, cancel := u.link.whileAlive(fromUpstream(ctx, u))
	defer cancel()
	return p.firewall(ctx, u, u.link.host, engine.Origin{}, req.Params)
}

// firewall runs one sampling request through the whole pipeline and asks
// the host by push: for an upstream's push, and for a 2026-07-28
// upstream's input request when the host is older.
func (p *Proxy) firewall(ctx context.Context, u *upstream, h hostView, o engine.Origin, in *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	c, err := p.requestStage(ctx, u, h, o, in)
	if err != nil {
		return nil, err
	}
	res, err := p.completion(ctx, h, c)
	if err != nil {
		return nil, err
	}
	return p.resultStage(review.WithParent(ctx, c.reviewID), u, &c.s, res)
}

// cleared is a request the firewall let through: the sampling as it will
// be answered (with the operator's edit in place of the original), the
// decision and review it went through, and the operator's completion when
// they wrote one.
type cleared struct {
	s          engine.Request
	params     *mcp.CreateMessageWithToolsParams
	decisionID string
	reviewID   string
	answer     []byte
}

// requestStage decides the request and settles an escalation. A request
// that passes but that no host can answer waits for an operator's answer
// when this server allows one. Encoding and describing the request run
// with the decision on a worker (see judge); what the request stage
// clears is made after the wait, from in, which the SDK holds anyway.
func (p *Proxy) requestStage(ctx context.Context, u *upstream, h hostView, o engine.Origin, in *mcp.CreateMessageWithToolsParams) (*cleared, error) {
	t := &stage{u: u}
	err := p.judge(ctx, t, func() error {
		raw, err := encode(forwardable(in))
		if err != nil {
			return errInternal("sampling request could not be encoded")
		}
		t.s = p.sampling(u, h, o, raw)
		t.v = p.eng.Decide(ctx, t.s)
		if t.v.Outcome == engine.OutcomePass && u.cfg.OperatorAnswer && !h.canSample() {
			t.v = p.awaitAnswer(ctx, t.s, t.v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t.cleared(in)
}

// cleared is the request the settled request stage t lets through, or
// its refusal.
func (t *stage) cleared(in *mcp.CreateMessageWithToolsParams) (*cleared, error) {
	if t.v.Outcome != engine.OutcomePass {
		return nil, wireError(t.v)
	}
	c := &cleared{s: t.s, params: forwardable(in), decisionID: t.v.DecisionID, reviewID: t.reviewID, answer: t.answer}
	c.s.Validated = t.v.Validated // the result stage does not validate the request again
	if t.edited != nil {
		c.s.Params, c.params = t.edited, new(mcp.CreateMessageWithToolsParams)
		if err := json.Unmarshal(t.edited, c.params); err != nil {
			return nil, errInternal("edited request could not be decoded")
		}
	}
	return c, nil
}

// completion is the operator's answer when they wrote one, else the
// host's model's.
func (p *Proxy) completion(ctx context.Context, h hostView, c *cleared) (*mcp.CreateMessageWithToolsResult, error) {
	if c.answer == nil && !h.canSample() {
		return nil, errNoHostFor(c.decisionID)
	}
	if c.answer == nil {
		return p.askHost(ctx, h, c)
	}
	var res mcp.CreateMessageWithToolsResult
	if err := json.Unmarshal(c.answer, &res); err != nil {
		return nil, errInternal("the operator's answer could not be decoded")
	}
	return &res, nil
}

// resultStage checks the completion and settles a stage-two escalation:
// nothing reaches the upstream before the operator decides, and what
// reaches it is their edit when they made one. Encoding the completion
// runs with the check on a worker (see judge).
func (p *Proxy) resultStage(ctx context.Context, u *upstream, s *engine.Request, res *mcp.CreateMessageWithToolsResult) (*mcp.CreateMessageWithToolsResult, error) {
	t := &stage{u: u, s: *s}
	err := p.judge(ctx, t, func() error {
		raw, err := encode(res)
		if err != nil {
			return errInternal("host completion could not be encoded")
		}
		if werr := t.hold.grow(claim{bytes: int64(len(raw))}); werr != nil {
			return werr // the completion is held while it is checked and reviewed
		}
		t.result = raw
		t.v = p.eng.Check(ctx, t.s, raw)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t.checked(res)
}

// checked is the completion as the settled result stage t lets it
// through, or its refusal.
func (t *stage) checked(res *mcp.CreateMessageWithToolsResult) (*mcp.CreateMessageWithToolsResult, error) {
	if t.v.Outcome != engine.OutcomePass {
		return nil, wireError(t.v)
	}
	if t.edited == nil {
		return res, nil
	}
	var edited mcp.CreateMessageWithToolsResult
	if err := json.Unmarshal(t.edited, &edited); err != nil {
		return nil, errInternal("edited completion could not be decoded")
	}
	return &edited, nil
}

// canonical is an operator's edit or answer as the relay will forward it:
// decoded into the SDK's type and encoded again, so the bytes the engine
// judges are the bytes that go out (as forwardable does for requests).
func canonical(stage engine.Stage, raw []byte) ([]byte, error) {
	var v any = new(mcp.CreateMessageWithToolsResult)
	if stage == engine.StageRequest {
		v = new(mcp.CreateMessageWithToolsParams)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	if params, ok := v.(*mcp.CreateMessageWithToolsParams); ok {
		v = forwardable(params)
	}
	return json.Marshal(v)
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
// An origin the caller knows (an input request's host call) wins over the
// guess for a push.
func (p *Proxy) sampling(u *upstream, h hostView, o engine.Origin, raw []byte) engine.Request {
	if o == (engine.Origin{}) {
		o = u.origin()
	}
	return engine.Request{
		Server: engine.Server{Name: u.cfg.Name, Label: u.cfg.Label, Protocol: u.era, Reported: u.reported()},
		Host:   engine.Host{Protocol: h.era, Capabilities: h.capabilities()},
		Origin: o,
		Caps:   u.capsFor(h),
		Params: raw,
	}
}

// askHost sends the cleared request to the host's model with a deadline.
// The host's own refusal is a "no" (-1) and any other failure an error
// nobody chose (-32603); either way the upstream hears the firewall's
// words under the request's decision, never what the host wrote.
func (p *Proxy) askHost(ctx context.Context, h hostView, c *cleared) (*mcp.CreateMessageWithToolsResult, error) {
	host := h.session
	if host == nil || h.modern() {
		return nil, errNoHostFor(c.decisionID)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.HostTimeout)
	defer cancel()
	res, err := host.CreateMessageWithTools(hostStream(ctx, false), c.params)
	if undelivered(err) { // the call whose stream it took ended meanwhile
		res, err = host.CreateMessageWithTools(hostStream(ctx, true), c.params)
	}
	if err == nil {
		return &mcp.CreateMessageWithToolsResult{Role: res.Role, Content: res.Content, Model: res.Model, StopReason: res.StopReason}, nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == codeUserRejected {
		p.log.Info("host rejected sampling", zap.String("decision_id", c.decisionID))
		return nil, errHostRejected(c.decisionID)
	}
	p.log.Warn("host sampling failed", zap.String("decision_id", c.decisionID), zap.Error(err))
	return nil, errHostFailed(c.decisionID, errors.Is(err, context.DeadlineExceeded))
}

// undelivered reports a push the SDK's HTTP transport refused to write:
// the host never saw it, so it may be sent again.
func undelivered(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == codeRejectedByTransport
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
