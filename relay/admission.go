package relay

import (
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// Limits bound what upstreams may make the firewall hold: requests in
// flight (every kind it relays to a host for them: sampling, elicitation,
// roots; received and not yet answered: being decided, waiting for a
// review, waiting for the host), pending reviews, and the bytes of the
// requests and answers held for them. Each is counted per
// configured server, over all its sessions (one server's many sessions are
// one attacker), and per server within one host session (one host's share
// of it). Zero fields take DefaultLimits.
type Limits struct {
	InFlight       int   // limits.max_in_flight
	PendingReviews int   // limits.max_pending_reviews
	HeldBytes      int64 // limits.max_held_bytes
	// The same, for one server's requests on behalf of one host session.
	HostInFlight       int   // limits.max_in_flight_per_host
	HostPendingReviews int   // limits.max_pending_reviews_per_host
	HostHeldBytes      int64 // limits.max_held_bytes_per_host
}

// DefaultLimits are the limits unless configured: of the order of 16
// requests being decided or answered and 32 waiting for a person, per
// server. A pending review counts as in flight too, so the in-flight limit
// is the two added: a server whose reviews are all taken still has 16
// requests decided and answered. The byte limits are multiples of
// limits.max_bytes (4 MiB), the largest request validation lets through:
// four of the largest per server, two per host session; the per-host
// limits are half the server's, so one host's session cannot take a
// server's whole allowance.
func DefaultLimits() Limits {
	return Limits{InFlight: 48, PendingReviews: 32, HeldBytes: 16 << 20,
		HostInFlight: 24, HostPendingReviews: 16, HostHeldBytes: 8 << 20}
}

// resolved fills every unset limit from DefaultLimits.
func (l Limits) resolved() Limits {
	d := DefaultLimits()
	return Limits{InFlight: orDefault(l.InFlight, d.InFlight), PendingReviews: orDefault(l.PendingReviews, d.PendingReviews),
		HeldBytes: orDefault(l.HeldBytes, d.HeldBytes), HostInFlight: orDefault(l.HostInFlight, d.HostInFlight),
		HostPendingReviews: orDefault(l.HostPendingReviews, d.HostPendingReviews), HostHeldBytes: orDefault(l.HostHeldBytes, d.HostHeldBytes)}
}

// claim is what one holder takes: requests in flight, review slots, bytes.
type claim struct {
	inFlight, reviews int
	bytes             int64
}

func (c claim) add(d claim) claim {
	return claim{inFlight: c.inFlight + d.inFlight, reviews: c.reviews + d.reviews, bytes: c.bytes + d.bytes}
}

func (c claim) sub(d claim) claim {
	return claim{inFlight: c.inFlight - d.inFlight, reviews: c.reviews - d.reviews, bytes: c.bytes - d.bytes}
}

// shareKey is one server's share within one host session (see hostKey).
type shareKey struct {
	server string
	host   any
}

// modernHosts is the host key of every 2026-07-28 request: such hosts have
// no session, so they share one.
type modernHosts struct{}

// hostKey is the host session h stands for in the limits.
func hostKey(h hostView) any {
	if h.session == nil || h.modern() {
		return modernHosts{}
	}
	return h.session
}

// admission is the one gate every request relayed to a host for an
// upstream passes before the firewall spends anything on it, whatever its
// kind (kinds) and its way in: a push (guard), an input request entry
// (guard, admitRound), a bridged call's push; and the tally of what is
// held. Callers acquire a hold and release it on every way out; drain
// waits for every hold to be released.
type admission struct {
	lim Limits

	mu      sync.Mutex
	servers map[string]claim
	shares  map[shareKey]claim
	holds   int           // holds not yet released
	idle    chan struct{} // closed while holds is 0; replaced when it rises
	refused *refusalLog
	closed  bool // the firewall is stopping: nothing more is taken
	// metrics counts each refusal by server and limit; nil counts none.
	metrics *telemetry.Metrics
}

func newAdmission(lim Limits, log *zap.Logger) *admission {
	idle := make(chan struct{})
	close(idle)
	return &admission{lim: lim.resolved(), servers: map[string]claim{}, shares: map[shareKey]claim{},
		idle: idle, refused: newRefusalLog(log)}
}

// hold is what one holder took; release gives it back, once.
type hold struct {
	a    *admission
	key  shareKey
	mu   sync.Mutex
	c    claim
	done bool
}

// acquire takes c for server within host, or refuses at once, naming the
// limit, when that would pass one.
func (a *admission) acquire(server string, host any, c claim) (*hold, *jsonrpc.Error) {
	key := shareKey{server, host}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, refusal.ShuttingDown()
	}
	if werr := a.over(key, c); werr != nil {
		return nil, werr
	}
	a.take(key, c)
	if a.holds++; a.holds == 1 {
		a.idle = make(chan struct{})
	}
	return &hold{a: a, key: key, c: c}, nil
}

// fits reports, without taking anything, the limit c would pass now, as
// acquire would. It counts the refusal.
func (a *admission) fits(server string, host any, c claim) *jsonrpc.Error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.over(shareKey{server, host}, c)
}

// over is the first limit that holding c more for key would pass, counted
// and logged as a refusal, or nil. Callers hold a.mu.
func (a *admission) over(key shareKey, c claim) *jsonrpc.Error {
	s, h := a.servers[key.server].add(c), a.shares[key].add(c)
	for _, l := range []struct {
		name       string
		held, max  int64
		hostShared bool
	}{
		{"limits.max_in_flight", int64(s.inFlight), int64(a.lim.InFlight), false},
		{"limits.max_pending_reviews", int64(s.reviews), int64(a.lim.PendingReviews), false},
		{"limits.max_held_bytes", s.bytes, a.lim.HeldBytes, false},
		{"limits.max_in_flight_per_host", int64(h.inFlight), int64(a.lim.HostInFlight), true},
		{"limits.max_pending_reviews_per_host", int64(h.reviews), int64(a.lim.HostPendingReviews), true},
		{"limits.max_held_bytes_per_host", h.bytes, a.lim.HostHeldBytes, true},
	} {
		if l.held > l.max {
			a.count(limitRefusal("upstream request", key.server, l.name), l.max)
			return refusal.LimitReached(l.name, l.max, key.server, l.hostShared)
		}
	}
	return nil
}

// count counts and logs a refusal by a limit of the given value, and
// counts it in the metrics.
func (a *admission) count(r refusalKind, value int64) {
	a.metrics.Refused(r.server, r.detail)
	a.refused.count(r, zap.Int64("value", value))
}

// refuseSession counts and logs a host session refused by limit, as
// count does an upstream's request: whoever opens sessions in a loop must
// not fill the log either.
func (a *admission) refuseSession(limit string, value int64) {
	a.count(limitRefusal("host session", "", limit), value)
}

// take adds c to key's tallies. Callers hold a.mu.
func (a *admission) take(key shareKey, c claim) {
	a.servers[key.server] = a.servers[key.server].add(c)
	a.shares[key] = a.shares[key].add(c)
}

// give subtracts c from key's tallies, forgetting tallies back at zero
// (host sessions come and go). Callers hold a.mu.
func (a *admission) give(key shareKey, c claim) {
	if s := a.servers[key.server].sub(c); s == (claim{}) {
		delete(a.servers, key.server)
	} else {
		a.servers[key.server] = s
	}
	if h := a.shares[key].sub(c); h == (claim{}) {
		delete(a.shares, key)
	} else {
		a.shares[key] = h
	}
}

// grow adds c to what h holds, or refuses, naming the limit, and then h
// holds what it held before. A released or nil hold refuses nothing and
// takes nothing.
func (h *hold) grow(c claim) *jsonrpc.Error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return nil
	}
	a := h.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if werr := a.over(h.key, c); werr != nil {
		return werr
	}
	a.take(h.key, c)
	h.c = h.c.add(c)
	return nil
}

// release gives back what h holds. It may be called any number of times,
// and on a nil hold.
func (h *hold) release() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	h.done = true
	a := h.a
	a.mu.Lock()
	defer a.mu.Unlock()
	a.give(h.key, h.c)
	if a.holds--; a.holds == 0 {
		close(a.idle)
	}
}

// close refuses every later acquire: the firewall is stopping.
func (a *admission) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
}

// drain waits until every hold is released, or until timeout, and
// reports whether all were.
func (a *admission) drain(timeout time.Duration) bool {
	a.mu.Lock()
	idle := a.idle
	a.mu.Unlock()
	return closedWithin(idle, timeout)
}

// closedWithin waits until ch is closed, or until timeout, and reports
// whether it was.
func closedWithin(ch <-chan struct{}, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// held is what server holds now, over all host sessions.
func (a *admission) held(server string) claim {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.servers[server]
}

// refusals is how many requests of server limit refused so far.
func (a *admission) refusals(server, limit string) int64 {
	return a.refused.total(limitRefusal("upstream request", server, limit))
}
