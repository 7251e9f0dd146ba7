package relay

import (
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// A server whose session cannot serve is that server down, never the
// host's session: the link keeps a place for it (so names stay as they
// are with every server up), lists leave it out, and a request routed to
// it is refused with refusal.UpstreamDown naming it, since when and why.
// A down place is an upstream without a session, or whose session was
// lost; downSince and downWhy say since when and, in the metrics' fixed
// words, why. The link starts it again (restart.go), and the hosts are
// told their lists changed when it goes down and when it comes back.

// downUpstream is the place of cfg's server on l when its start failed
// with err, which is logged (it may quote what the server wrote) but
// never sent to a host.
func (p *Proxy) downUpstream(l *link, cfg Upstream, err error) *upstream {
	p.log.Error("upstream failed to start", zap.String("server", cfg.Name), zap.Error(err))
	return &upstream{cfg: cfg, log: p.log.With(zap.String("server", cfg.Name)), link: l, inFlight: map[*hostCall]struct{}{},
		held: newPushHolds(), downSince: time.Now(), downWhy: startFailure(err)}
}

// restartDown schedules a restart of every place of l that is down.
func (p *Proxy) restartDown(l *link) {
	for _, u := range l.upstreamList() {
		if u.isDown() {
			p.restartLater(u)
		}
	}
}

// isDown reports whether u cannot take a request: it never started, or
// its connection was lost.
func (u *upstream) isDown() bool { return u.session == nil || u.lost.Load() }

// refuseDown is the host's answer for a request routed to u while it is
// down, nil while it is up.
func (u *upstream) refuseDown() error {
	if !u.isDown() {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return refusal.UpstreamDown(u.cfg.Name, u.downSince, u.downWhy)
}

// markLost records that u's connection was lost, now: it is down.
func (u *upstream) markLost() {
	u.mu.Lock()
	u.downSince, u.downWhy = time.Now(), telemetry.ReasonLost
	u.mu.Unlock()
	u.lost.Store(true)
}
