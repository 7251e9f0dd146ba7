package relay

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// upstream is one running upstream server and the session to it.
type upstream struct {
	cfg  Upstream
	log  *zap.Logger // the relay's, naming the server
	link *link
	era  string                // the revision the session speaks
	caps validate.Capabilities // sampling sub-capabilities and elicitation modes offered to it
	// offered is what the session was offered at initialize (sessionOffer).
	offered *mcp.ClientCapabilities
	// urls are the URL elicitations it may complete (urlelicit.go).
	urls    urlElicitations
	session *mcp.ClientSession
	// downSince and downWhy say since when and why a place without a
	// session is down (down.go).
	downSince time.Time
	downWhy   string

	// held keeps the admission of each push not yet answered (pushhold.go).
	held *pushHolds
	// inputs keeps its last input requests as it wrote them (answerorder.go).
	inputs *recentJSON
	// listed keeps the tools it listed as it wrote them (toolorder.go).
	listed *listedTools
	// framePath holds the host calls relayed to it on the frame path
	// (framepath.go); nil for a URL upstream, which has none.
	framePath *frameCalls

	mu       sync.Mutex
	inFlight map[*hostCall]struct{} // host tools/calls now running on it
	info     map[string]any         // the serverInfo of session, made by reported

	// closing is set when the firewall closes the session itself; lost when
	// the session ended without that (the process exited, the stream broke).
	closing, lost atomic.Bool
	// health is the session as the upstream metrics count it: live, then
	// lost or closed, whichever comes first (see sessionEnded).
	health  atomic.Int32
	metrics *telemetry.Metrics
}

// The session's health as the metrics count it.
const (
	healthLive int32 = iota
	healthLost
	healthClosed
)

// modern reports whether the upstream speaks 2026-07-28 or later: its
// sampling arrives inside input_required results, never as a push.
func (u *upstream) modern() bool { return isModern(u.era) }

// onFramePath reports whether host calls to u may take the frame path: it
// runs as a command, speaks a revision before 2026-07-28 (whose answers
// may ask for input, which the relay must run) and its session is live.
func (u *upstream) onFramePath() bool {
	return u.framePath != nil && u.framePath.stdin != nil && !u.modern() && !u.lost.Load() && !u.closing.Load()
}

// connect starts cfg's server and opens a session at the revision the link
// asks for (see requestedEra), offered what sessionOffer says. A push is
// offered sampling only when someone can answer it: the host, when it
// declared sampling, or an operator, when cfg.OperatorAnswer is on (then
// even a host that cannot sample gets the firewall's sampling, answered by
// `mcpx-fw review answer`); never when cfg.Sampling is off. Tools and
// context only when the host declared those too. The SDK's input-request
// loop is off: the relay runs it, so every entry crosses the firewall.
func (p *Proxy) connect(l *link, cfg Upstream, era string) (*upstream, error) {
	u := &upstream{cfg: cfg, log: p.log.With(zap.String("server", cfg.Name)), link: l, inFlight: map[*hostCall]struct{}{}, held: newPushHolds(), inputs: &recentJSON{}, listed: &listedTools{}}
	o := sessionOffer(cfg, l)
	// Capabilities always explicit, never nil: the SDK would add its
	// defaults (roots.listChanged) to a nil one.
	opts := &mcp.ClientOptions{Capabilities: o.caps, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) { p.relayProgress(ctx, u, req) },
		ToolListChangedHandler:      p.toolsChanged, PromptListChangedHandler: p.promptsChanged,
		ResourceListChangedHandler: func(ctx context.Context, req *mcp.ResourceListChangedRequest) { p.resourcesChanged(ctx, u, req) },
		ElicitationCompleteHandler: func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			p.elicitationComplete(ctx, u, req)
		}, KeepAlive: p.cfg.Restart.PingInterval, KeepAliveFailureThreshold: pingMisses}
	offered := o.sampling
	u.caps, u.offered = o.modes, o.caps
	if offered {
		opts.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return p.onSampling(ctx, u, req)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-fw", Version: p.cfg.Version}, opts)
	// The middleware added last runs first: the answer goes out in the
	// host's member order (answerInHostOrder), the URL elicitations the
	// upstream is answered with are noted, then what u was not offered is
	// refused, and only then does the firewall's own elicitation and roots
	// handling run.
	client.AddReceivingMiddleware(p.interceptPushes(u))
	client.AddReceivingMiddleware(p.refuseUnoffered(u))
	client.AddReceivingMiddleware(p.watchURLElicitations(u))
	client.AddReceivingMiddleware(p.answerInHostOrder)
	client.AddSendingMiddleware(sendRootsChanged)
	// Not the host request's context: the session outlives that request,
	// and its values (the request's identity) must not travel with it.
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.ConnectTimeout)
	defer cancel()
	t := p.upstreamTransportFor(u)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: requestedEra(cfg.Era, era)})
	if err != nil {
		p.cfg.Metrics.UpstreamStartFailed(cfg.Name, startFailure(err))
		return nil, err
	}
	u.metrics = p.cfg.Metrics
	u.metrics.UpstreamStarted(cfg.Name)
	u.mu.Lock()
	u.session, u.era = cs, cs.InitializeResult().ProtocolVersion // a push can be screened before Connect returns; see reported
	u.mu.Unlock()
	go p.watchUpstream(u, cs)
	p.log.Info("upstream connected", zap.String("server", cfg.Name),
		zap.String("protocol", u.era), zap.Bool("sampling", offered))
	return u, nil
}

// connectBridged starts a session for one bridged call on l, whose bridge
// slot takes its pushes from the first: always at the last revision with
// pushes, since bridging exists for upstreams that push.
func (p *Proxy) connectBridged(l *link, cfg Upstream) (*upstream, error) {
	cfg.Era = "legacy"
	return p.connect(l, cfg, l.host.era)
}

// requestedEra is the revision to ask an upstream for: the host's unless
// the server's protocol setting says otherwise. A 2026-07-28 request falls
// back, inside the SDK, to 2025-11-25 for a server that does not speak it.
func requestedEra(setting, hostEra string) string {
	switch setting {
	case "", "auto":
		return hostEra
	case "legacy":
		if isModern(hostEra) {
			return "2025-11-25"
		}
		return hostEra
	}
	return setting
}

// capsFor is what the upstream was offered for a request from h: fixed at
// connect for a session that receives pushes, declared per request (by
// upstreamMeta) for a 2026-07-28 one.
func (u *upstream) capsFor(h hostView) validate.Capabilities {
	if u.modern() {
		return capsOf(h.offeredTo(u.cfg))
	}
	return u.caps
}

// capsOf is the sampling sub-capabilities and the elicitation modes h
// declared.
func capsOf(h hostView) validate.Capabilities {
	var c validate.Capabilities
	if h.canSample() {
		c.Tools, c.Context = h.caps.Sampling.Tools != nil, h.caps.Sampling.Context != nil
	}
	if h.caps != nil {
		c.Form, c.URL = elicitationModes(h.caps.Elicitation)
	}
	return c
}

func advertised(c validate.Capabilities) *mcp.SamplingCapabilities {
	s := &mcp.SamplingCapabilities{}
	if c.Tools {
		s.Tools = &mcp.SamplingToolsCapabilities{}
	}
	if c.Context {
		s.Context = &mcp.SamplingContextCapabilities{}
	}
	return s
}

// screenFor validates the raw params of a request of kind k u pushes
// (see guardedTransport).
func (p *Proxy) screenFor(u *upstream) screen {
	return func(ctx context.Context, k *pipeline.Kind, params json.RawMessage) *jsonrpc.Error {
		v, ok := p.eng.Screen(ctx, pipeline.Describe(p.source(u, u.link.host, engine.Origin{}), k, params))
		if ok {
			return nil
		}
		return refusal.ForVerdict(k.Name, v)
	}
}

// screenInputsFor validates the raw sampling and elicitation entries of
// u's input_required results. The host of the call is not known on the
// wire, so every sampling capability counts as offered here; the typed
// check that follows applies the host's.
func (p *Proxy) screenInputsFor(u *upstream) screen {
	return func(ctx context.Context, k *pipeline.Kind, params json.RawMessage) *jsonrpc.Error {
		s := pipeline.Describe(p.source(u, u.link.host, engine.Origin{}), k, params)
		s.Caps = validate.Capabilities{Tools: true, Context: true, Form: true, URL: true}
		if v, ok := p.eng.Screen(ctx, s); !ok {
			return refusal.ForVerdict(k.Name, v)
		}
		return nil
	}
}

// refuseUnoffered answers at once the requests of an upstream for what its
// session was never offered, instead of the SDK's non-standard
// "unsupported" code or its default answers (an empty roots list):
// sampling the host cannot answer is an error nobody chose (-32603);
// sampling the config withholds (servers.<name>.sampling: false), and
// elicitation or roots not offered, are requests for a capability the
// server does not have (-32602).
func (p *Proxy) refuseUnoffered(u *upstream) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch {
			case method == "sampling/createMessage" && u.offered.Sampling == nil && !u.cfg.Sampling:
				return nil, p.notOffered(u, "sampling")
			case method == "sampling/createMessage" && u.offered.Sampling == nil:
				return nil, p.noHost(u, "the host did not declare sampling")
			case method == "elicitation/create" && u.offered.Elicitation == nil:
				return nil, p.notOffered(u, "elicitation")
			case method == "roots/list" && u.offered.RootsV2 == nil:
				return nil, p.notOffered(u, "roots")
			}
			return next(ctx, method, req)
		}
	}
}

// notOffered refuses a request for a capability u was not offered. The
// refusal is logged as a limit's is (admit.Gate.Refuse): an upstream may send
// such requests as fast as it likes.
func (p *Proxy) notOffered(u *upstream, capability string) error {
	p.admit.Refuse(admit.Refusal{What: "request", Outcome: "refused: capability not offered to the server",
		Server: u.cfg.Name, Key: "capability", Detail: capability})
	return refusal.NotOffered(u.cfg.Name, capability)
}

// noHost refuses a sampling push nobody can answer, at once and as an
// error nobody chose (-32603), before any decision is made.
func (p *Proxy) noHost(u *upstream, why string) error { return p.noHostFor(u, pipeline.Sampling, why) }

// noHostFor refuses a push of kind k nobody can answer, as noHost does.
// The refusal is logged as a limit's is (admit.Gate.Refuse): an upstream may push
// as fast as it likes where no host can answer (a 2026-07-28 host's shared
// session, a host that did not declare sampling).
func (p *Proxy) noHostFor(u *upstream, k *pipeline.Kind, why string) error {
	p.admit.Refuse(admit.Refusal{What: refusal.KindNoun(k.Name) + " request", Outcome: "refused: no host can answer",
		Server: u.cfg.Name, Key: "why", Detail: why})
	return refusal.ForVerdict(k.Name, engine.Verdict{Stage: engine.StageRequest, Reasons: []engine.Reason{{Code: refusal.ReasonNoHost, Message: why}}})
}

// reported is what the upstream says about itself: display only. It is
// made once per session, and every request shares it: nobody may modify
// it.
func (u *upstream) reported() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.info == nil && u.session != nil {
		u.info = serverInfo(u.session)
	}
	if u.info == nil {
		return map[string]any{}
	}
	return u.info
}

// serverInfo is the serverInfo cs reported at initialize as a JSON object;
// nil when there is none.
func serverInfo(cs *mcp.ClientSession) map[string]any {
	if cs.InitializeResult() == nil || cs.InitializeResult().ServerInfo == nil {
		return nil
	}
	var m map[string]any
	b, _ := json.Marshal(cs.InitializeResult().ServerInfo)
	_ = json.Unmarshal(b, &m)
	return m
}

// watchUpstream logs an upstream whose connection ended without the
// firewall closing it: its process exited or its stream broke. What it had
// in flight has already failed with -32603 naming it (upstreamError; those
// requests' contexts ended, which abandons any review they waited on, and
// its pushes waiting on the host are answered -32603); it is down
// (down.go): later requests to it are refused at once, the hosts are told
// their lists changed, and its link starts it again (restart.go).
func (p *Proxy) watchUpstream(u *upstream, cs *mcp.ClientSession) {
	err := cs.Wait()
	u.held.end() // its pushes in flight can no longer be answered
	if !u.health.CompareAndSwap(healthLive, healthLost) {
		u.metrics.UpstreamClosed(u.cfg.Name)
	} else {
		u.metrics.UpstreamLost(u.cfg.Name)
	}
	if u.closing.Load() {
		u.framePath.end()
		return
	}
	u.markLost()
	u.framePath.end()
	fields := []zap.Field{zap.String("server", u.cfg.Name)}
	if err != nil {
		fields = append(fields, zap.Error(err))
	}
	if u.link.bridge != nil {
		p.log.Error("upstream connection lost: its process exited or its stream broke; the bridged call fails", fields...)
		return
	}
	p.log.Error("upstream connection lost: its process exited, its stream broke or it stopped answering pings; it is down and starts again after restart.backoff", fields...)
	p.listsChanged()
	p.restartLater(u)
}

func (u *upstream) close() {
	u.closing.Store(true)
	if u.health.Swap(healthClosed) == healthLost {
		u.metrics.UpstreamLostClosed(u.cfg.Name) // its link no longer holds it
	}
	if u.session != nil {
		_ = u.session.Close()
	}
}

// startFailure is why a session could not start, in the metrics' fixed
// words: never the error itself, which may carry what the upstream wrote.
func startFailure(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return telemetry.ReasonStartTimeout
	}
	return telemetry.ReasonStartFailed
}
