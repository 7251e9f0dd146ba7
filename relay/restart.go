package relay

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"
)

// RestartOptions is how a server that is down on a host's link (it failed
// to start, or its connection was lost) is started again: after Backoff,
// then after twice as long each time it fails again, never waiting more
// than MaxBackoff between tries, for as long as the host's session lasts.
// It is the restart: section of cmd's config file.
type RestartOptions struct {
	Backoff    time.Duration `mapstructure:"backoff"`     // the wait before the first try; default 1s
	MaxBackoff time.Duration `mapstructure:"max_backoff"` // the longest wait between tries; default 1m
	// PingInterval is how often a session (up to 2025-11-25) is pinged; one
	// that leaves pingMisses pings in a row unanswered, each within half
	// the interval, has stopped answering: its session is closed, and it
	// is down and started again like one whose process exited. Zero never
	// pings (cmd's default is 30s).
	PingInterval time.Duration `mapstructure:"ping_interval"`
}

// pingMisses is how many pings in a row a server may leave unanswered
// before it counts as no longer answering.
const pingMisses = 3

// DefaultRestartOptions are the restart settings unless configured.
func DefaultRestartOptions() RestartOptions {
	return RestartOptions{Backoff: time.Second, MaxBackoff: time.Minute}
}

// resolved fills what o leaves unset with the defaults, and never lets the
// longest wait be shorter than the first.
func (o RestartOptions) resolved() RestartOptions {
	d := DefaultRestartOptions()
	o.Backoff = orDefault(o.Backoff, d.Backoff)
	o.MaxBackoff = max(orDefault(o.MaxBackoff, d.MaxBackoff), o.Backoff)
	return o
}

// retry calls try after o.Backoff, then again after each wait, doubled up
// to o.MaxBackoff, until it reports success or ctx ends.
func (o RestartOptions) retry(ctx context.Context, try func(next time.Duration) bool) {
	wait := o.Backoff
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		next := min(wait*2, o.MaxBackoff)
		if try(next) {
			return
		}
		wait = next
	}
}

// restartLater starts down's server again on its link, as
// RestartOptions says, unless it is being restarted already or the link
// is a bridged call's own (which ends with its call). The link owns each
// of its servers' lifecycle: up, down (no session, or its session lost),
// and starting again, one restart at a time per server.
func (p *Proxy) restartLater(down *upstream) {
	l := down.link
	if l.bridge != nil {
		return
	}
	l.mu.Lock()
	if l.gone.Err() != nil || l.restarting[down.cfg.Name] || !slices.Contains(l.upstreams, down) {
		l.mu.Unlock()
		return // not placed yet: connectAll restarts it once it is (restartDown)
	}
	if l.restarting == nil {
		l.restarting = map[string]bool{}
	}
	l.restarting[down.cfg.Name] = true
	l.mu.Unlock()
	go p.restart(l, down)
}

// restart tries to start down's server until it is up on l or l closes.
func (p *Proxy) restart(l *link, down *upstream) {
	defer func() {
		l.mu.Lock()
		delete(l.restarting, down.cfg.Name)
		l.mu.Unlock()
	}()
	tries := 0
	p.cfg.Restart.retry(l.gone, func(next time.Duration) bool {
		tries++
		u, err := p.connect(l, down.cfg, l.host.era)
		if err != nil {
			p.log.Warn("upstream restart failed; it stays down", zap.String("server", down.cfg.Name), zap.Int("try", tries),
				zap.Duration("next_try_in", next), zap.Error(err))
			return false
		}
		if p.replace(l, down, u) {
			p.log.Info("upstream restarted", zap.String("server", down.cfg.Name), zap.Int("tries", tries))
			p.listsChanged()
		}
		return true
	})
}

// replace puts up in down's place on l, and reports whether it did: when
// l closed meanwhile, up is closed instead. The list is copied, never
// changed in place: requests read it without the lock.
func (p *Proxy) replace(l *link, down, up *upstream) bool {
	l.mu.Lock()
	i := -1
	for j, u := range l.upstreams {
		if u == down {
			i = j
		}
	}
	if i < 0 || l.gone.Err() != nil {
		l.mu.Unlock()
		up.close()
		return false
	}
	ups := append([]*upstream(nil), l.upstreams...)
	ups[i] = up
	l.upstreams = ups
	l.mu.Unlock()
	l.resources.forget(down)
	down.close()
	p.known.remember(up.cfg, l.host.era, l, up.session.InitializeResult().Capabilities)
	return true
}

// listsChanged tells the hosts that the tools, prompts and resources of
// a link changed (a server went down or came back), through the firewall's
// own list_changed notifications, which every host session hears on its
// own channel and which the firewall declares while a server is down
// (mergedCapabilities).
func (p *Proxy) listsChanged() {
	ctx := context.Background()
	p.toolsChanged(ctx, nil)
	p.promptsChanged(ctx, nil)
	p.notifyResources()
}
