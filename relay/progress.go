package relay

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// progressRoutes maps the progress tokens the firewall sends upstream to
// the host call they belong to. Tokens are per session on each side, so a
// host's token is never forwarded: two hosts may use the same one, and an
// upstream could otherwise name another host's call.
type progressRoutes struct {
	mu     sync.Mutex
	next   uint64
	routes map[string]progressRoute
}

type progressRoute struct {
	ctx   context.Context // the host call, for its session and stream
	host  *mcp.ServerSession
	token any // the host's own token
}

// route gives a host call with a progress token a firewall token for the
// upstream, valid until the returned func is called. Without a token (or a
// session to notify) it returns nil.
func (r *progressRoutes) route(ctx context.Context, host *mcp.ServerSession, token any) (any, func()) {
	if token == nil || host == nil {
		return nil, func() {}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.routes == nil {
		r.routes = map[string]progressRoute{}
	}
	r.next++
	ours := fmt.Sprintf("mcpx-fw-%d", r.next)
	r.routes[ours] = progressRoute{ctx: ctx, host: host, token: token}
	return ours, func() {
		time.AfterFunc(progressGrace, func() {
			r.mu.Lock()
			delete(r.routes, ours)
			r.mu.Unlock()
		})
	}
}

// progressGrace keeps a route after its call ends: the SDK handles
// notifications concurrently with responses, so progress an upstream sent
// before its result may be handled after it.
const progressGrace = 2 * time.Second

// relayProgress passes an upstream's progress to the host call it names,
// with the host's own token; progress for no known call is dropped.
func (p *Proxy) relayProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.progress.mu.Lock()
	rt, ok := p.progress.routes[fmt.Sprint(req.Params.ProgressToken)]
	p.progress.mu.Unlock()
	if !ok {
		return
	}
	err := rt.host.NotifyProgress(valuesOf{Context: ctx, values: rt.ctx}, &mcp.ProgressNotificationParams{
		ProgressToken: rt.token, Message: req.Params.Message, Progress: req.Params.Progress, Total: req.Params.Total})
	if err != nil {
		p.log.Debug("progress not relayed", zap.Error(err))
	}
}
