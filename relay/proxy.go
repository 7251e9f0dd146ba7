package relay

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// Upstream is one configured MCP server the firewall starts and relays to.
type Upstream struct {
	Name    string            // the operator's name for it: the trusted label
	Label   string            // shown to reviewers
	Command []string          // stdio command and arguments
	Env     map[string]string // added to the firewall's own environment
	Dir     string            // working directory; empty for the firewall's
	// OperatorAnswer lets an operator write completions for this server
	// (mcpx-fw review answer); sampling is then offered to it even when the
	// host cannot sample.
	OperatorAnswer bool
}

// Config is what the relay needs besides its collaborators.
type Config struct {
	Upstreams []Upstream
	// HostTimeout bounds each sampling call to the host; the SDK sets none.
	HostTimeout time.Duration
	// ConnectTimeout bounds starting and initializing each upstream.
	ConnectTimeout time.Duration
	Version        string // reported as the firewall's serverInfo version
}

// legacyVersions are the protocol revisions served until the 2026-07-28
// input-request loop lands: a newer host negotiates down to 2025-11-25.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Proxy is the firewall between one host and its upstream servers.
type Proxy struct {
	cfg   Config
	eng   *engine.Engine
	store *review.Store
	log   *zap.Logger

	// hostGone is closed when the host's session ends, so that sampling
	// requests still waiting (on a review, on the host) stop at once and
	// their reviews are abandoned, instead of holding shutdown until expiry.
	hostGone chan struct{}

	mu        sync.Mutex
	host      *mcp.ServerSession
	hostCaps  *mcp.ClientCapabilities
	hostEra   string
	upstreams []*upstream
}

// New returns a Proxy; nothing starts until Serve.
func New(cfg Config, eng *engine.Engine, store *review.Store, log *zap.Logger) *Proxy {
	if cfg.HostTimeout <= 0 {
		cfg.HostTimeout = 5 * time.Minute
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = time.Minute
	}
	return &Proxy{cfg: cfg, eng: eng, store: store, log: log.Named("relay"), hostGone: make(chan struct{})}
}

// ServeStdio serves one host over the given streams (the process's stdin
// and stdout for `mcpx-fw serve`) until the host disconnects or ctx ends.
func (p *Proxy) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return p.serve(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

// serve runs the host-facing server on t and closes every upstream after.
func (p *Proxy) serve(ctx context.Context, t mcp.Transport) error {
	defer p.closeUpstreams()
	defer close(p.hostGone) // runs first: waiting requests end before upstreams close
	err := p.server().Run(ctx, t)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// server builds the host-facing MCP server. Its capabilities are replaced
// at initialize by what the upstreams offer.
func (p *Proxy) server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpx-fw", Version: p.cfg.Version}, &mcp.ServerOptions{
		Capabilities:              &mcp.ServerCapabilities{},
		SupportedProtocolVersions: legacyVersions,
	})
	srv.AddReceivingMiddleware(p.initializeMiddleware, p.forwardMiddleware)
	return srv
}

// whileHostLives derives a context that also ends when the host leaves.
func (p *Proxy) whileHostLives(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-p.hostGone:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (p *Proxy) closeUpstreams() {
	p.mu.Lock()
	ups := p.upstreams
	p.upstreams = nil
	p.mu.Unlock()
	for _, u := range ups {
		u.close()
	}
}
