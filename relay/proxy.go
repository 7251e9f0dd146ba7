package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// Upstream is one configured MCP server the firewall starts and relays to.
type Upstream struct {
	Name    string   // the operator's name for it: the trusted label
	Label   string   // shown to reviewers
	Command []string // stdio command and arguments
	// Env is the command's own variables, added to the allow-listed part
	// of the firewall's environment (sandbox.Environ): the command never
	// gets the firewall's whole environment.
	Env map[string]string
	Dir string // working directory; empty for the firewall's
	// Isolated starts the command through the sandbox's launcher, in its
	// own namespaces, with Config.Hide out of its reach (sandbox.Command).
	Isolated bool
	// URL is a streamable HTTP endpoint, used instead of Command when set;
	// Headers go on every request to it (credentials: never logged).
	URL     string
	Headers map[string]string
	// Era is servers.<name>.protocol, the era the firewall speaks to this
	// server: "" or "auto" follows the host, "legacy" never goes past
	// 2025-11-25, a revision string asks for exactly that one.
	Era string
	// OperatorAnswer lets an operator write completions for this server
	// (mcpx-fw review answer); sampling is then offered to it even when the
	// host cannot sample.
	OperatorAnswer bool
	// Sampling offers sampling to this server when the host can sample (or
	// OperatorAnswer is set); false never offers it, and the server's
	// sampling requests are refused as asking for a capability it was not
	// given. cmd's default is true.
	Sampling bool
	// Elicitation is what this server may ask the user through the host.
	Elicitation ElicitationConfig
	// Roots is what this server may learn of the host's roots.
	Roots RootsConfig
}

// ElicitationConfig is one server's elicitation settings: its
// elicitation: section in cmd's config file.
type ElicitationConfig struct {
	// Enabled offers elicitation to the server when the host declared it,
	// with the modes (form, url) the host declared; false never offers it.
	// cmd's default is true.
	Enabled bool `mapstructure:"enabled"`
	// AllowedHosts are the URL-mode hosts policies let through without a
	// review (data.mcpxfw.config.servers[name].elicitation.allowed_hosts);
	// empty: every URL is reviewed.
	AllowedHosts []string `mapstructure:"allowed_hosts"`
}

// RootsConfig is one server's roots settings: its roots: section in
// cmd's config file.
type RootsConfig struct {
	// Enabled offers roots to the server when the host declared them (with
	// listChanged as the host declared it); false never offers them.
	// cmd's default is true.
	Enabled bool `mapstructure:"enabled"`
	// Allow are the URI prefixes the server may see of the host's roots
	// (data.mcpxfw.config.servers[name].roots.allow); a root outside every
	// prefix is left out of its list. Empty: the host's list as the policy
	// passes it.
	Allow []string `mapstructure:"allow"`
}

// Config is what the relay needs besides its collaborators.
type Config struct {
	Upstreams []Upstream
	// PrefixNames gives tool and prompt names their server's prefix
	// (<server>__<name>) even with one upstream, so they stay the same
	// when a server is added (names.prefix: always). With several they
	// always have it.
	PrefixNames bool
	// HostTimeout bounds each sampling call to the host; the SDK sets none.
	HostTimeout time.Duration
	// ReviewProgress is how often a host call a review holds gets progress,
	// when its host asked for progress (review.progress_interval; 0 sends
	// none; reviewprogress.go).
	ReviewProgress time.Duration
	// ConnectTimeout bounds starting and initializing each upstream.
	ConnectTimeout time.Duration
	// MaxRounds caps the input-request rounds of one host call, in either
	// direction (limits.max_rounds; default 8).
	MaxRounds int
	// MaxBridged and MaxBridgedPerServer cap the bridged calls running or
	// awaiting their hosts' retries at once, each holding an upstream
	// session of its own (limits.max_bridged_calls, default 64, and
	// limits.max_bridged_calls_per_server, default 16).
	MaxBridged, MaxBridgedPerServer int
	// BridgeWait bounds how long a bridged call waits for the host's retry
	// (limits.bridge_wait; default 1m, never more than StateTTL).
	BridgeWait time.Duration
	// StateTTL is how long a 2026-07-28 host has to retry with the
	// requestState the firewall gave it (default HostTimeout).
	StateTTL time.Duration
	// SealKey authenticates the requestState handed to 2026-07-28 hosts; a
	// random key is made when it is empty (states then die with the process).
	SealKey []byte
	// Limits bound what upstreams may make the firewall hold (package admit).
	Limits Limits
	// Restart is how a server that is down on a host's link is started
	// again (restart.go).
	Restart RestartOptions
	// HTTP configures serving hosts over HTTP (http.go).
	HTTP    HTTPOptions
	Version string // reported as the firewall's serverInfo version
	// Hide are the paths an isolated upstream cannot reach: the state dir,
	// the config, the policies, the log files (see Upstream.Isolated).
	Hide []string
	// ReadOnly are the paths an isolated upstream can read but not change:
	// the user's entry points (sandbox.OperatorPaths).
	ReadOnly []string
	// Metrics records the host's answers, review waits, upstream sessions
	// and refusals by limit; nil records nothing.
	Metrics *telemetry.Metrics
	// Tracer starts the firewall's spans (traces.go); nil turns tracing
	// off at no cost. cmd builds its provider and flushes it on exit.
	Tracer trace.Tracer
}

// Proxy is the firewall between hosts and their upstream servers.
type Proxy struct {
	cfg Config
	// answers keeps the hosts' answers as they wrote them
	// (answerorder.go): those of the stdio host, or of every host over
	// HTTP.
	answers *recentJSON
	// sent keeps the requests of upstreams the firewall relays to hosts,
	// as their upstreams wrote them (order.go).
	sent   *recentJSON
	eng    *engine.Engine
	store  *review.Store
	log    *zap.Logger
	srv    *mcp.Server
	sealer *seal.Sealer
	// replica names this Proxy in the states of the bridged calls it
	// parks, so another replica can tell a retry it must hand over to it
	// (handover.go), and in the handovers' rows.
	replica  string
	handed   handedRounds   // sampling entries out with 2026-07-28 hosts
	bridges  bridgePool     // 2026-07-28 host calls to upstreams that push
	progress progressRoutes // progress tokens sent upstream, by host call
	admit    *admit.Gate    // what each upstream holds, and the gate before anything else
	// pipe decides what upstreams ask of hosts: its decision workers and
	// the shared wait on the review queue.
	pipe  *pipeline.Pipeline
	known knownCapabilities
	// streams says when an HTTP host opens its standalone stream, for
	// pushes waiting on it (hoststreams.go).
	streams hostStreams

	mu     sync.Mutex
	links  map[*mcp.ServerSession]*link // hosts that initialized
	modern *link                        // every 2026-07-28 request, made on first use
	closed bool
	// sessions counts the host sessions that initialized or are
	// initializing (http.max_sessions).
	sessions int
	// starting serialises making the modern link, without holding mu
	// while upstream processes start.
	starting sync.Mutex
	// detaching counts links being closed because their host left (added
	// under mu): Close waits for them too, so the firewall does not exit
	// while an upstream is still stopping (its last stderr lines unlogged,
	// an isolated one killed with its launcher).
	detaching sync.WaitGroup
	quiet     sync.Once // quiesce
	// lazy is set when hosts are served over HTTP (Handler): a host
	// session's upstreams then start on its first request that needs them,
	// not at its initialize.
	lazy atomic.Bool
	// handovers starts, once, the taking of retries other replicas hand
	// to the bridged calls this one holds (handoverhold.go).
	handovers sync.Once
}

// New returns a Proxy; nothing starts until a host connects.
func New(cfg Config, eng *engine.Engine, store *review.Store, log *zap.Logger) *Proxy {
	cfg.HostTimeout = orDefault(cfg.HostTimeout, 5*time.Minute)
	cfg.ConnectTimeout = orDefault(cfg.ConnectTimeout, time.Minute)
	cfg.MaxRounds = orDefault(cfg.MaxRounds, 8)
	cfg.StateTTL = orDefault(cfg.StateTTL, cfg.HostTimeout)
	cfg = bridgeDefaults(cfg)
	cfg.HTTP = cfg.HTTP.resolved()
	cfg.Restart = cfg.Restart.resolved()
	p := &Proxy{cfg: cfg, eng: eng, store: store, log: log.Named("relay"), links: map[*mcp.ServerSession]*link{}}
	p.admit = admit.New(cfg.Limits, p.log, cfg.Metrics)
	p.pipe = pipeline.New(pipeline.Deps{Engine: eng, Store: store, Admit: p.admit, Metrics: cfg.Metrics,
		Tracer: cfg.Tracer, Log: p.log, HostTimeout: cfg.HostTimeout})
	p.bridges.metrics = cfg.Metrics
	p.sealer = seal.New(sealKey(cfg.SealKey), nil)
	p.replica = newReplicaID()
	p.sent = &recentJSON{}
	p.srv = p.server()
	return p
}

// ServeStdio serves one host over the given streams (the process's stdin
// and stdout for `mcpx-fw serve`) until the host disconnects or ctx ends.
// Its tools/calls take the frame path where they can (framepath.go).
func (p *Proxy) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	h := newHostWire(p, in, out)
	p.answers = &recentJSON{}
	return p.serve(ctx, h.transport(), h)
}

// serve runs the host-facing server on t and closes every upstream after.
// When ctx ends, the firewall quiesces before the host's session closes
// (see quiesce); when the host leaves first, its calls end with it. h is
// the host's stdio stream, nil for any other transport.
func (p *Proxy) serve(ctx context.Context, t mcp.Transport, h *hostWire) error {
	defer p.Close()
	run, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	defer context.AfterFunc(ctx, func() {
		p.quiesce()
		stop()
	})()
	err := p.run(run, t, h)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// run is the SDK's Server.Run, which it follows, with the session handed
// to the host's stream as soon as it exists, and, when ctx ends, the
// host's calls on the frame path let finish as the SDK lets its own.
func (p *Proxy) run(ctx context.Context, t mcp.Transport, h *hostWire) error {
	ss, err := p.srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	if h != nil {
		h.session.Store(ss)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		if h != nil && !h.drain(drainGrace) {
			p.log.Warn("host calls still in flight at shutdown; their upstreams are closed under them", zap.Duration("after", drainGrace))
		}
		_ = ss.Close()
		<-ended
		return ctx.Err()
	case err := <-ended:
		return err
	}
}

// server builds the host-facing MCP server. Its capabilities are replaced,
// at initialize and at server/discover, by what the upstreams offer.
func (p *Proxy) server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpx-fw", Version: p.cfg.Version}, &mcp.ServerOptions{
		// The lists may change (listchanged.go); the SDK accepts a 2026-07-28
		// host's subscriptions/listen only for what its options declare.
		// What a host is told at initialize and discover is mergedCapabilities.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true},
			Prompts: &mcp.PromptCapabilities{ListChanged: true}, Resources: &mcp.ResourceCapabilities{ListChanged: true}},
		RootsListChangedHandler: p.rootsChanged,
	})
	srv.AddReceivingMiddleware(p.initializeMiddleware, p.forwardMiddleware)
	srv.AddReceivingMiddleware(p.inputsInSentOrder)
	srv.AddSendingMiddleware(restoreElicitParams, p.sendInSentOrder)
	return srv
}

// drainGrace bounds how long quiesce waits for the requests it stopped to
// be answered.
const drainGrace = 5 * time.Second

// quiesce stops the firewall's work and answers what it holds, before
// hosts' sessions and upstreams close: no new host session or sampling
// request is taken; every request waiting (on a review, on the host)
// stops, its review abandoned with its audit entry; and it waits until
// each has been answered to its upstream (-32603). Were the hosts'
// sessions closed first, the host calls behind the upstreams' requests
// would be cancelled, and the upstreams would hear nothing. The review
// store must stay open until it returns. Later calls wait for the first.
func (p *Proxy) quiesce() {
	p.quiet.Do(func() {
		p.mu.Lock()
		links := p.allLinks()
		p.closed = true
		p.mu.Unlock()
		p.admit.Close()
		p.bridges.closeAll(p)
		for _, l := range links {
			l.leave()
		}
		p.handed.closeAll()
		if !p.admit.Drain(drainGrace) {
			p.log.Warn("requests still in flight at shutdown; their upstreams are closed under them", zap.Duration("after", drainGrace))
		}
	})
}

// allLinks lists every host link; callers hold p.mu.
func (p *Proxy) allLinks() []*link {
	links := make([]*link, 0, len(p.links)+1)
	for _, l := range p.links {
		links = append(links, l)
	}
	if p.modern != nil {
		links = append(links, p.modern)
	}
	return links
}

// Close quiesces the firewall, then closes every host link and its
// upstreams.
func (p *Proxy) Close() {
	p.quiesce()
	p.mu.Lock()
	links := p.allLinks()
	p.links, p.modern = map[*mcp.ServerSession]*link{}, nil
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
	p.detaching.Wait()
	p.pipe.Close()
	p.admit.LogTotals()
}

// sealKey is the configured key, or a random one for this process only.
func sealKey(key []byte) []byte {
	if len(key) > 0 {
		return key
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never returns an error on supported platforms
	}
	return key
}

// newReplicaID is a random name for one Proxy: 64 bits, so two replicas
// (or two runs of one) never share one.
func newReplicaID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never returns an error on supported platforms
	}
	return hex.EncodeToString(b)
}

// Limits bound what upstreams may make the firewall hold; zero fields take
// DefaultLimits (package admit, which enforces them).
type Limits = admit.Limits

// DefaultLimits are the limits unless configured.
func DefaultLimits() Limits { return admit.DefaultLimits() }
