package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// Deps are what the pipeline works with, the same for every request.
type Deps struct {
	Engine *engine.Engine
	// Store is the review queue escalations wait on.
	Store *review.Store
	// Admit is the gate every stage holds its share of the limits from.
	Admit *admit.Gate
	// Metrics records the host's answers and review waits; nil records
	// none.
	Metrics *telemetry.Metrics
	// Tracer starts the pipeline's spans; nil starts none.
	Tracer trace.Tracer
	Log    *zap.Logger
	// HostTimeout bounds every request made of a host
	// (sampling.host_timeout).
	HostTimeout time.Duration
}

// Pipeline runs the requests upstreams make of the host: it owns the
// decision workers and the shared wait on the review queue.
type Pipeline struct {
	eng         *engine.Engine
	store       *review.Store
	admit       *admit.Gate
	metrics     *telemetry.Metrics
	tracer      trace.Tracer
	log         *zap.Logger
	hostTimeout time.Duration
	workers     workers
	reviews     reviewWaits
}

// New is a pipeline working with d.
func New(d Deps) *Pipeline {
	return &Pipeline{eng: d.Engine, store: d.Store, admit: d.Admit, metrics: d.Metrics, tracer: d.Tracer,
		log: d.Log, hostTimeout: d.HostTimeout}
}

// Close stops the decision workers once they finish what they run; a
// request decided after runs on a goroutine of its own.
func (p *Pipeline) Close() { p.workers.close() }

// Source is who makes one request and of whom: the upstream server, as
// the engine reads it and as the limits count it, and the host it asks.
type Source struct {
	// Server is the upstream: its name, label, revision and the identity
	// it reported.
	Server engine.Server
	// Caps is what the upstream was offered of the host's capabilities.
	Caps validate.Capabilities
	// Host is the host's revision and capabilities as the engine reads
	// them; HostCaps what it declared (Kind.Declared reads it).
	Host     engine.Host
	HostCaps *mcp.ClientCapabilities
	// HostKey names the host session in the limits (package admit).
	HostKey string
	// Origin is the host call the request belongs to, when the caller
	// knows it; else Guess names the most likely one, read as the request
	// is described.
	Origin engine.Origin
	Guess  func() engine.Origin
	// OperatorAnswer is servers.<name>.operator_answer, RootsAllow
	// servers.<name>.roots.allow.
	OperatorAnswer bool
	RootsAllow     []string
	// Parent is the context a request the pipeline runs whole is traced
	// under (a push's host call); nil keeps the caller's.
	Parent func(context.Context) context.Context
	// Asker asks the host; nil when no host can be asked (a 2026-07-28
	// host, which is answered by hand-back, or none).
	Asker Asker
	// Hold is called, with the request's context, as the request starts
	// to wait on a review, and the func it returns as the wait ends: the
	// host call the review holds can be kept alive meanwhile (relay sends
	// it progress). Nil holds nothing.
	Hold func(ctx context.Context) (release func())
}

// hold is src.Hold's, or nothing to release.
func (src *Source) hold(ctx context.Context) func() {
	if src.Hold == nil {
		return func() {}
	}
	return src.Hold(ctx)
}

// Asker asks the host for the answer to one request of kind k, as
// cleared. The pipeline bounds it by the host timeout and reads its
// errors: a JSON-RPC error with the spec's "user rejected" code (-1) is
// the host's "no", anything else a failure.
type Asker interface {
	Ask(ctx context.Context, k *Kind, params mcp.InputRequest) (mcp.InputResponse, error)
}

// Entry is what the result stage needs of a cleared request: its kind,
// the request as cleared (with an operator's edit in place, and the codes
// a person approved, engine.Request.Approved), and the review it went
// through.
type Entry struct {
	Kind     *Kind
	Request  engine.Request
	ReviewID string
}

// Cleared is a request the firewall let through: the request as it will
// be answered (with the operator's edit in place of the original), the
// decision and review it went through, and the operator's completion when
// they wrote one.
type Cleared struct {
	Entry
	Params     mcp.InputRequest
	DecisionID string
	answer     []byte
	// edited says an operator's edit replaced the upstream's request.
	edited bool
}

// Run runs one request of kind k through the whole pipeline and asks the
// host by push: describe and decide the request, wait for a review, get
// the answer (from the host, or for sampling from an operator), check it,
// and record every step. It serves an upstream's push, and a 2026-07-28
// upstream's input request when the host is older.
func (p *Pipeline) Run(ctx context.Context, src *Source, k *Kind, in mcp.InputRequest) (mcp.InputResponse, error) {
	ctx, span := p.traceUpstreamRequest(ctx, src, k, in)
	defer span.End()
	c, err := p.Decide(ctx, src, k, in)
	if err != nil {
		return nil, err
	}
	answering := p.traceHostAnswer(ctx, c)
	res, err := p.answer(ctx, src, c)
	endSpan(answering, err)
	if err != nil {
		return nil, err
	}
	return p.Check(ctx, src, c.Entry, res)
}

// Decide is the request stage: it decides the request and settles an
// escalation. A request that passes but that no host can answer waits for
// an operator's answer when this server and the kind allow one
// (sampling): the engine opens its review (engine.Request.AwaitAnswer).
// Encoding and describing the request run with the decision on a worker
// (see decide); what the request stage clears is made after the wait,
// from in, which the caller holds anyway. A kind that decides nothing at
// the request stage (roots) is cleared as it is. While every review slot
// of its server is taken by an open review, a request is refused before
// it is decided: a server past limits.max_pending_reviews does not make
// the firewall evaluate its policy. The slot itself is taken only if the
// request's review opens (see decide).
func (p *Pipeline) Decide(ctx context.Context, src *Source, k *Kind, in mcp.InputRequest) (*Cleared, error) {
	if !k.decides {
		fwd := k.forwardable(in)
		raw, err := encode(fwd)
		if err != nil {
			return nil, refusal.Internal(refusal.KindNoun(k.Name) + " request could not be encoded")
		}
		return &Cleared{Entry: Entry{Kind: k, Request: Describe(src, k, raw)}, Params: fwd}, nil
	}
	if werr := p.admit.Fits(src.Server.Name, src.HostKey, admit.Claim{Reviews: 1}); werr != nil {
		return nil, werr // its reviews are all open: whether it would be held is known only by deciding it
	}
	t := &stage{src: src, k: k}
	ctx, span := p.traceDecision(ctx, t, engine.StageRequest)
	defer p.endDecision(span, t)
	err := p.decide(ctx, t, func() error {
		raw, err := encode(k.forwardable(in))
		if err != nil {
			return refusal.Internal(refusal.KindNoun(k.Name) + " request could not be encoded")
		}
		t.s = Describe(src, k, raw)
		t.s.AwaitAnswer = k.operatorAnswers && src.OperatorAnswer && !k.declared(src.HostCaps)
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
func (t *stage) cleared(in mcp.InputRequest) (*Cleared, error) {
	if t.v.Outcome != engine.OutcomePass {
		return nil, refusal.ForVerdict(t.k.Name, t.v)
	}
	c := &Cleared{Entry: Entry{Kind: t.k, Request: t.s, ReviewID: t.reviewID}, Params: t.k.forwardable(in),
		DecisionID: t.v.DecisionID, answer: t.answer}
	c.Request.Validated = t.v.Validated     // the result stage does not validate the request again
	c.Request.ReviewSlot = nil              // the request stage's; the result stage takes its own
	c.Request.Reservation = t.v.Reservation // the result stage settles what the request reserved
	if t.edited != nil {
		params, err := t.k.decodeRequest(t.edited)
		if err != nil {
			return nil, refusal.Internal("edited request could not be decoded")
		}
		c.Request.Params, c.Params, c.edited = t.edited, params, true
	}
	return c, nil
}

// answer is the operator's answer when they wrote one, else the host's;
// nothing for a request that has ended.
func (p *Pipeline) answer(ctx context.Context, src *Source, c *Cleared) (mcp.InputResponse, error) {
	if ctx.Err() != nil { // its request ended since it was cleared: nobody is asked
		return nil, refusal.Cancelled()
	}
	if c.answer == nil && !c.Kind.declared(src.HostCaps) {
		return nil, refusal.NoHostFor(c.Kind.Name, c.DecisionID)
	}
	if c.answer == nil {
		return p.ask(ctx, src, c)
	}
	res, err := c.Kind.decodeResult(c.answer)
	if err != nil {
		return nil, refusal.Internal("the operator's answer could not be decoded")
	}
	return res, nil
}

// Check is the result stage: it checks the answer to the cleared request
// e and settles a stage-two escalation: nothing reaches the upstream
// before the operator decides, and what reaches it is their edit when
// they made one. Roots are narrowed to the server's roots.allow first, so
// the policy judges the list the upstream would get. Encoding the answer
// runs with the check on a worker (see decide).
func (p *Pipeline) Check(ctx context.Context, src *Source, e Entry, res mcp.InputResponse) (mcp.InputResponse, error) {
	ctx = review.WithParent(ctx, e.ReviewID)
	if r, ok := res.(*mcp.ListRootsResult); ok {
		res = narrowRoots(r, src.RootsAllow)
	}
	t := &stage{src: src, k: e.Kind, s: e.Request}
	t.s.ReviewSlot = t.reviewSlot
	ctx, span := p.traceDecision(ctx, t, engine.StageResult)
	defer p.endDecision(span, t)
	err := p.decide(ctx, t, func() error {
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
		return nil, refusal.ForVerdict(t.k.Name, t.v)
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

// Describe describes one request of kind k from src for the engine. An
// origin the caller knows (an input request's host call) wins over the
// guess for a push.
func Describe(src *Source, k *Kind, raw []byte) engine.Request {
	o := src.Origin
	if o == (engine.Origin{}) && src.Guess != nil {
		o = src.Guess()
	}
	return engine.Request{Kind: k.Name, Server: src.Server, Host: src.Host, Origin: o, Caps: src.Caps, Params: raw}
}

// ask sends the cleared request to the host with a deadline (the host
// timeout bounds every request made of a host). The host's own refusal is
// a "no" (-1) and any other failure an error nobody chose (-32603);
// either way the upstream hears the firewall's words under the request's
// decision, never what the host wrote.
func (p *Pipeline) ask(ctx context.Context, src *Source, c *Cleared) (mcp.InputResponse, error) {
	if src.Asker == nil {
		return nil, refusal.NoHostFor(c.Kind.Name, c.DecisionID)
	}
	ctx, cancel := context.WithTimeout(ctx, p.hostTimeout)
	defer cancel()
	if !c.edited {
		ctx = context.WithValue(ctx, uneditedKey{}, unedited{params: c.Params, judged: c.Request.Params})
	}
	start := time.Now()
	res, err := src.Asker.Ask(ctx, c.Kind, c.Params)
	answered := func(result string) {
		p.metrics.HostAnswered(c.Request.Server.Name, string(c.Kind.Name), result, time.Since(start))
	}
	if err == nil {
		answered("ok")
		return res, nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == refusal.CodeUserRejected {
		answered("rejected")
		p.log.Info("host rejected "+refusal.KindNoun(c.Kind.Name), zap.String("decision_id", c.DecisionID))
		return nil, refusal.HostRejected(c.Kind.Name, c.DecisionID)
	}
	answered("error")
	p.log.Warn("host "+refusal.KindNoun(c.Kind.Name)+" failed", zap.String("decision_id", c.DecisionID), zap.Error(err))
	return nil, refusal.HostFailed(c.Kind.Name, c.DecisionID, errors.Is(err, context.DeadlineExceeded))
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
