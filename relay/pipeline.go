package relay

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// firewall runs one request of kind k through the whole pipeline of
// DESIGN §2 and asks the host by push: validate and decide the request,
// wait for a review, get the answer (from the host, or for sampling from
// an operator), check it, and record every step. It serves an upstream's
// push, and a 2026-07-28 upstream's input request when the host is older.
func (p *Proxy) firewall(ctx context.Context, u *upstream, h hostView, o engine.Origin, k *kind, in mcp.InputRequest) (mcp.InputResponse, error) {
	ctx, span := p.traceUpstreamRequest(ctx, u, k, in)
	defer span.End()
	c, err := p.requestStage(ctx, u, h, o, k, in)
	if err != nil {
		return nil, err
	}
	answering := p.traceHostAnswer(ctx, c)
	res, err := p.completion(ctx, h, c)
	endSpan(answering, err)
	if err != nil {
		return nil, err
	}
	return p.resultStage(review.WithParent(ctx, c.reviewID), u, c.k, &c.s, res)
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

// cleared is a request the firewall let through: the request as it will
// be answered (with the operator's edit in place of the original), the
// decision and review it went through, and the operator's completion when
// they wrote one. s carries the request stage's verdict on to the result
// stage: the codes a person approved (engine.Request.Approved).
type cleared struct {
	k          *kind
	s          engine.Request
	params     mcp.InputRequest
	decisionID string
	reviewID   string
	answer     []byte
}

// requestStage decides the request and settles an escalation. A request
// that passes but that no host can answer waits for an operator's answer
// when this server and the kind allow one (sampling): the engine opens its
// review (engine.Request.AwaitAnswer). Encoding and describing the
// request run with the decision on a worker (see judge); what the request
// stage clears is made after the wait, from in, which the SDK holds
// anyway. A kind that decides nothing at the request stage (roots) is
// cleared as it is. While every review slot of its server is taken by an
// open review, a request is refused before it is decided: a server past
// limits.max_pending_reviews does not make the firewall evaluate its
// policy. The slot itself is taken only if the request's review opens
// (see judge).
func (p *Proxy) requestStage(ctx context.Context, u *upstream, h hostView, o engine.Origin, k *kind, in mcp.InputRequest) (*cleared, error) {
	if !k.decides {
		fwd := k.forwardable(in)
		raw, err := encode(fwd)
		if err != nil {
			return nil, refusal.Internal(refusal.KindNoun(k.name) + " request could not be encoded")
		}
		return &cleared{k: k, s: p.describe(u, h, o, k, raw), params: fwd}, nil
	}
	if werr := p.admit.Fits(u.cfg.Name, hostKey(u.link.host), admit.Claim{Reviews: 1}); werr != nil {
		return nil, werr // its reviews are all open: whether it would be held is known only by deciding it
	}
	t := &stage{u: u, k: k}
	ctx, span := p.traceDecision(ctx, t, engine.StageRequest)
	defer p.endDecision(span, t)
	err := p.judge(ctx, t, func() error {
		raw, err := encode(k.forwardable(in))
		if err != nil {
			return refusal.Internal(refusal.KindNoun(k.name) + " request could not be encoded")
		}
		t.s = p.describe(u, h, o, k, raw)
		t.s.AwaitAnswer = k.operatorAnswers && u.cfg.OperatorAnswer && !k.declared(h)
		t.s.ReviewSlot = t.reviewSlot
		t.v = p.eng.Decide(ctx, t.s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil && t.v.Outcome == engine.OutcomePass {
		// Its request ended while it was decided or reviewed: nothing is
		// let through. A refusal (a review abandoned as serve stops, say)
		// keeps its own answer.
		return nil, refusal.Cancelled()
	}
	return t.cleared(in)
}

// cleared is the request the settled request stage t lets through, or
// its refusal.
func (t *stage) cleared(in mcp.InputRequest) (*cleared, error) {
	if t.v.Outcome != engine.OutcomePass {
		return nil, refusal.ForVerdict(t.k.name, t.v)
	}
	c := &cleared{k: t.k, s: t.s, params: t.k.forwardable(in), decisionID: t.v.DecisionID, reviewID: t.reviewID, answer: t.answer}
	c.s.Validated = t.v.Validated     // the result stage does not validate the request again
	c.s.ReviewSlot = nil              // the request stage's; the result stage takes its own
	c.s.Reservation = t.v.Reservation // the result stage settles what the request reserved
	if t.edited != nil {
		params, err := t.k.decodeRequest(t.edited)
		if err != nil {
			return nil, refusal.Internal("edited request could not be decoded")
		}
		c.s.Params, c.params = t.edited, params
	}
	return c, nil
}

// completion is the operator's answer when they wrote one, else the
// host's; nothing for a request that has ended.
func (p *Proxy) completion(ctx context.Context, h hostView, c *cleared) (mcp.InputResponse, error) {
	if ctx.Err() != nil { // its request ended since it was cleared: nobody is asked
		return nil, refusal.Cancelled()
	}
	if c.answer == nil && !c.k.declared(h) {
		return nil, refusal.NoHostFor(c.k.name, c.decisionID)
	}
	if c.answer == nil {
		return p.askHost(ctx, h, c)
	}
	res, err := c.k.decodeResult(c.answer)
	if err != nil {
		return nil, refusal.Internal("the operator's answer could not be decoded")
	}
	return res, nil
}

// resultStage checks the answer and settles a stage-two escalation:
// nothing reaches the upstream before the operator decides, and what
// reaches it is their edit when they made one. Roots are narrowed to the
// server's roots.allow first, so the policy judges the list the upstream
// would get. Encoding the answer runs with the check on a worker (see
// judge).
func (p *Proxy) resultStage(ctx context.Context, u *upstream, k *kind, s *engine.Request, res mcp.InputResponse) (mcp.InputResponse, error) {
	if r, ok := res.(*mcp.ListRootsResult); ok {
		res = narrowRoots(r, u.cfg.Roots.Allow)
	}
	t := &stage{u: u, k: k, s: *s}
	t.s.ReviewSlot = t.reviewSlot
	ctx, span := p.traceDecision(ctx, t, engine.StageResult)
	defer p.endDecision(span, t)
	err := p.judge(ctx, t, func() error {
		raw, err := encode(res)
		if err != nil {
			return refusal.Internal("host answer could not be encoded")
		}
		if werr := t.hold.Grow(admit.Claim{Bytes: int64(len(raw))}); werr != nil {
			return werr // the answer is held while it is checked and reviewed
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

// checked is the answer as the settled result stage t lets it through, or
// its refusal.
func (t *stage) checked(res mcp.InputResponse) (mcp.InputResponse, error) {
	if t.v.Outcome != engine.OutcomePass {
		return nil, refusal.ForVerdict(t.k.name, t.v)
	}
	if t.edited == nil {
		return res, nil
	}
	edited, err := t.k.decodeResult(t.edited)
	if err != nil {
		return nil, refusal.Internal("edited answer could not be decoded")
	}
	return edited, nil
}

// describe describes one request for the engine. An origin the caller
// knows (an input request's host call) wins over the guess for a push.
func (p *Proxy) describe(u *upstream, h hostView, o engine.Origin, k *kind, raw []byte) engine.Request {
	if o == (engine.Origin{}) {
		o = u.origin()
	}
	return engine.Request{
		Kind:   k.name,
		Server: engine.Server{Name: u.cfg.Name, Label: u.cfg.Label, Protocol: u.era, Reported: u.reported()},
		Host:   engine.Host{Protocol: h.era, Capabilities: h.capabilities()},
		Origin: o,
		Caps:   u.capsFor(h),
		Params: raw,
	}
}

// askHost sends the cleared request to the host with a deadline
// (sampling.host_timeout bounds every request made of a host). The host's
// own refusal is a "no" (-1) and any other failure an error nobody chose
// (-32603); either way the upstream hears the firewall's words under the
// request's decision, never what the host wrote.
func (p *Proxy) askHost(ctx context.Context, h hostView, c *cleared) (mcp.InputResponse, error) {
	host := h.session
	if host == nil || h.modern() {
		return nil, refusal.NoHostFor(c.k.name, c.decisionID)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.HostTimeout)
	defer cancel()
	start := time.Now()
	res, err := c.k.ask(hostStream(ctx, false), host, c.params)
	if undelivered(err) { // the call whose stream it took ended meanwhile
		res, err = c.k.ask(hostStream(ctx, true), host, c.params)
	}
	answered := func(result string) {
		p.cfg.Metrics.HostAnswered(c.s.Server.Name, string(c.k.name), result, time.Since(start))
	}
	if err == nil {
		answered("ok")
		return res, nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == refusal.CodeUserRejected {
		answered("rejected")
		p.log.Info("host rejected "+refusal.KindNoun(c.k.name), zap.String("decision_id", c.decisionID))
		return nil, refusal.HostRejected(c.k.name, c.decisionID)
	}
	answered("error")
	p.log.Warn("host "+refusal.KindNoun(c.k.name)+" failed", zap.String("decision_id", c.decisionID), zap.Error(err))
	return nil, refusal.HostFailed(c.k.name, c.decisionID, errors.Is(err, context.DeadlineExceeded))
}

// approvedCodes are the codes of an escalation's reasons: what a person
// approved by approving it.
func approvedCodes(v engine.Verdict) []string {
	codes := make([]string, 0, len(v.Reasons))
	for _, r := range v.Reasons {
		codes = append(codes, r.Code)
	}
	return codes
}
