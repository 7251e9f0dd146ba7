package relay

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// upstream is one running upstream server and the session to it.
type upstream struct {
	cfg     Upstream
	era     string
	caps    validate.Capabilities // sampling sub-capabilities advertised to it
	session *mcp.ClientSession

	mu       sync.Mutex
	inFlight map[string]int // host tools/call names now running on it
}

// connect starts cfg's command and initializes a session at era. Sampling
// is advertised only when someone can answer it: the host, when it
// declared sampling, or an operator, when cfg.OperatorAnswer is on (then
// even a host that cannot sample gets the firewall's sampling, answered by
// `mcpx-fw review answer`). Tools and context only when the host declared
// those too.
func (p *Proxy) connect(ctx context.Context, cfg Upstream, era string, host *mcp.ClientCapabilities) (*upstream, error) {
	u := &upstream{cfg: cfg, era: era, inFlight: map[string]int{}}
	opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	offered := host.Sampling != nil || cfg.OperatorAnswer
	if host.Sampling != nil {
		u.caps = validate.Capabilities{Tools: host.Sampling.Tools != nil, Context: host.Sampling.Context != nil}
	}
	if offered {
		opts.Capabilities.Sampling = advertised(u.caps)
		opts.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return p.onSampling(ctx, u, req)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-fw", Version: p.cfg.Version}, opts)
	if !offered {
		client.AddReceivingMiddleware(p.refuseSampling(u))
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.ConnectTimeout)
	defer cancel()
	var t mcp.Transport = &mcp.CommandTransport{Command: command(cfg)}
	if offered {
		t = &guardedTransport{Transport: t, screen: p.screenFor(u)}
	}
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.session = cs // a push can be screened before Connect returns; see reported
	u.mu.Unlock()
	p.log.Info("upstream connected", zap.String("server", cfg.Name),
		zap.String("protocol", cs.InitializeResult().ProtocolVersion), zap.Bool("sampling", offered))
	return u, nil
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

func command(cfg Upstream) *exec.Cmd {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Dir = cfg.Dir
	cmd.Stderr = os.Stderr // the upstream's own logs join ours on stderr
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
	}
	return cmd
}

// screenFor validates the raw sampling params u sends (see guardedTransport).
func (p *Proxy) screenFor(u *upstream) screen {
	return func(ctx context.Context, params json.RawMessage) *jsonrpc.Error {
		v, ok := p.eng.Screen(ctx, p.sampling(u, params))
		if ok {
			return nil
		}
		return wireError(v)
	}
}

// refuseSampling answers sampling pushes from an upstream that was never
// offered sampling (the host cannot answer): at once, and as an error
// nobody chose, instead of the SDK's non-standard "unsupported" code.
func (p *Proxy) refuseSampling(u *upstream) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "sampling/createMessage" {
				return next(ctx, method, req)
			}
			v := engine.Verdict{Stage: engine.StageRequest,
				Reasons: []engine.Reason{{Code: reasonNoHost, Message: "the host did not declare sampling"}}}
			p.log.Warn("sampling refused: host cannot sample", zap.String("server", u.cfg.Name))
			return nil, wireError(v)
		}
	}
}

// reported is what the upstream says about itself: display only.
func (u *upstream) reported() map[string]any {
	u.mu.Lock()
	cs := u.session
	u.mu.Unlock()
	if cs == nil || cs.InitializeResult() == nil || cs.InitializeResult().ServerInfo == nil {
		return map[string]any{}
	}
	info := cs.InitializeResult().ServerInfo
	if info == nil {
		return map[string]any{}
	}
	var m map[string]any
	b, _ := json.Marshal(info)
	_ = json.Unmarshal(b, &m)
	return m
}

// origin names the host call a push most likely belongs to: the only tool
// call in flight on this upstream, when there is exactly one.
func (u *upstream) origin() engine.Origin {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.inFlight) != 1 {
		return engine.Origin{}
	}
	for name := range u.inFlight {
		return engine.Origin{Method: "tools/call", Name: name}
	}
	return engine.Origin{}
}

func (u *upstream) track(name string) func() {
	u.mu.Lock()
	u.inFlight[name]++
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.inFlight[name]--; u.inFlight[name] <= 0 {
			delete(u.inFlight, name)
		}
	}
}

func (u *upstream) close() {
	if u.session != nil {
		_ = u.session.Close()
	}
}

func internalError(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeInternal, Message: msg}
}
