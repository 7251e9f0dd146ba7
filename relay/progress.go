package relay

import (
	"context"
	"crypto/rand"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// progressRoutes maps the progress tokens the firewall sends upstream to
// the host call they belong to. Tokens are per session on each side, so a
// host's token is never forwarded: two hosts may use the same one, and an
// upstream could otherwise name another host's call. The firewall's own
// tokens are random (128 bits), so no upstream can guess another's, and
// each is bound to the one upstream session its call went out on, so even
// a token that leaked is honoured from that session only.
type progressRoutes struct {
	mu     sync.Mutex
	routes map[string]*progressRoute
}

// progressRoute is one host call that asked for progress.
type progressRoute struct {
	routes *progressRoutes
	ours   string          // the token sent upstream
	ctx    context.Context // the host call, for its session and stream
	host   *mcp.ServerSession
	token  any // the host's own token
	// session is the upstream session the call went out on (see on); nil
	// until it is sent, so no progress is relayed before.
	session *mcp.ClientSession
	// sent orders the progress the host gets for this call (see pass and
	// beat): under its lock one notification at a time is chosen and
	// written.
	sent progressSent
}

// route gives a host call with a progress token a route whose token goes
// upstream (see on), valid until the returned func is called and a grace
// after. Without a token (or a session to notify) the route is nil.
func (r *progressRoutes) route(ctx context.Context, host *mcp.ServerSession, token any) (*progressRoute, func()) {
	if token == nil || host == nil {
		return nil, func() {}
	}
	rt := &progressRoute{routes: r, ours: "mcpx-fw-" + rand.Text(), ctx: ctx, host: host, token: token}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.routes == nil {
		r.routes = map[string]*progressRoute{}
	}
	r.routes[rt.ours] = rt
	return rt, func() {
		time.AfterFunc(progressGrace, func() {
			r.mu.Lock()
			delete(r.routes, rt.ours)
			r.mu.Unlock()
		})
	}
}

// on binds rt to cs, the upstream session the call is being sent on (the
// link's, or a bridged call's own), and returns the token to send; nil
// for a call that asked for no progress.
func (rt *progressRoute) on(cs *mcp.ClientSession) any {
	if rt == nil {
		return nil
	}
	rt.routes.mu.Lock()
	defer rt.routes.mu.Unlock()
	rt.session = cs
	return rt.ours
}

// progressGrace keeps a route after its call ends: the SDK handles
// notifications concurrently with responses, so progress an upstream sent
// before its result may be handled after it.
const progressGrace = 2 * time.Second

// find is the route token names, if cs is the session it was sent on.
// Otherwise why says whether the token is unknown (never issued, or its
// call is over) or foreign (issued on another session).
func (r *progressRoutes) find(token any, cs *mcp.ClientSession) (rt *progressRoute, why string) {
	ours, _ := token.(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	found := r.routes[ours]
	switch {
	case found == nil:
		return nil, "unknown"
	case found.session != cs:
		return nil, "foreign"
	}
	return found, ""
}

// relayProgress passes the progress u sent to the host call it names, with
// the host's own token. Progress naming no call of u's own session is
// dropped and logged (without its text): a token u was never given can
// only be a guess or a leak.
func (p *Proxy) relayProgress(ctx context.Context, u *upstream, req *mcp.ProgressNotificationClientRequest) {
	rt, why := p.progress.find(req.Params.ProgressToken, req.Session)
	switch why {
	case "unknown":
		p.log.Debug("progress dropped: its token names no call in flight", zap.String("server", u.cfg.Name))
		return
	case "foreign": // logged as a refusal (admit.Gate.Refuse): an upstream may send these as fast as it likes
		p.admit.Refuse(admit.Refusal{What: "progress notification", Outcome: "dropped: its token was issued to another upstream session", Server: u.cfg.Name})
		return
	}
	err := rt.pass(req.Params.Progress, func() error {
		return rt.host.NotifyProgress(valuesOf{Context: ctx, values: rt.ctx}, &mcp.ProgressNotificationParams{
			ProgressToken: rt.token, Message: req.Params.Message, Progress: req.Params.Progress, Total: req.Params.Total})
	})
	if err != nil {
		p.log.Debug("progress not relayed", zap.Error(err))
	}
}
