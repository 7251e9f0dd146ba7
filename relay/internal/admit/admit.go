package admit

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
// of it). Zero fields take DefaultLimits. The tags are the keys of the
// configuration's limits: section, which holds this type itself; the byte
// limits are ints like every other count there, so a value that does not
// parse is reported the same way for each.
type Limits struct {
	InFlight       int `mapstructure:"max_in_flight"`
	PendingReviews int `mapstructure:"max_pending_reviews"`
	HeldBytes      int `mapstructure:"max_held_bytes"`
	// The same, for one server's requests on behalf of one host session.
	HostInFlight       int `mapstructure:"max_in_flight_per_host"`
	HostPendingReviews int `mapstructure:"max_pending_reviews_per_host"`
	HostHeldBytes      int `mapstructure:"max_held_bytes_per_host"`
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

// Claim is what one holder takes: requests in flight, review slots, bytes.
type Claim struct {
	InFlight, Reviews int
	Bytes             int64
}

func (c Claim) Add(d Claim) Claim {
	return Claim{InFlight: c.InFlight + d.InFlight, Reviews: c.Reviews + d.Reviews, Bytes: c.Bytes + d.Bytes}
}

func (c Claim) sub(d Claim) Claim {
	return Claim{InFlight: c.InFlight - d.InFlight, Reviews: c.Reviews - d.Reviews, Bytes: c.Bytes - d.Bytes}
}

// shareKey is one server's share within one host session: host is the
// key the relay gives that session, "" for every 2026-07-28 request (such
// hosts have no session, so they share one).
type shareKey struct {
	server string
	host   string
}

// Gate is the one gate every request relayed to a host for an
// upstream passes before the firewall spends anything on it, whatever its
// kind (kinds) and its way in: a push (guard), an input request entry
// (guard, admitRound), a bridged call's push; and the tally of what is
// held. Callers acquire a hold and release it on every way out; drain
// waits for every hold to be released.
type Gate struct {
	lim Limits

	mu      sync.Mutex
	servers map[string]Claim
	shares  map[shareKey]Claim
	holds   int           // holds not yet released
	idle    chan struct{} // closed while holds is 0; replaced when it rises
	refused *refusalLog
	closed  bool // the firewall is stopping: nothing more is taken
	// metrics counts each refusal by server and limit; nil counts none.
	metrics *telemetry.Metrics
}

// New is a gate holding nothing, with lim's unset limits taken from
// DefaultLimits; its refusals are logged to log and counted in metrics
// (nil counts none).
func New(lim Limits, log *zap.Logger, metrics *telemetry.Metrics) *Gate {
	idle := make(chan struct{})
	close(idle)
	return &Gate{lim: lim.resolved(), servers: map[string]Claim{}, shares: map[shareKey]Claim{},
		idle: idle, refused: newRefusalLog(log), metrics: metrics}
}

// Hold is what one holder took; Release gives it back, once.
type Hold struct {
	a    *Gate
	key  shareKey
	mu   sync.Mutex
	c    Claim
	done bool
}

// Acquire takes c for server within host, or refuses at once, naming the
// limit, when that would pass one.
func (a *Gate) Acquire(server string, host string, c Claim) (*Hold, *jsonrpc.Error) {
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
	return &Hold{a: a, key: key, c: c}, nil
}

// Fits reports, without taking anything, the limit c would pass now, as
// acquire would. It counts the refusal.
func (a *Gate) Fits(server string, host string, c Claim) *jsonrpc.Error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.over(shareKey{server, host}, c)
}

// over is the first limit that holding c more for key would pass, counted
// and logged as a refusal, or nil. Callers hold a.mu.
func (a *Gate) over(key shareKey, c Claim) *jsonrpc.Error {
	s, h := a.servers[key.server].Add(c), a.shares[key].Add(c)
	for _, l := range []struct {
		name       string
		held, max  int64
		hostShared bool
	}{
		{"limits.max_in_flight", int64(s.InFlight), int64(a.lim.InFlight), false},
		{"limits.max_pending_reviews", int64(s.Reviews), int64(a.lim.PendingReviews), false},
		{"limits.max_held_bytes", s.Bytes, int64(a.lim.HeldBytes), false},
		{"limits.max_in_flight_per_host", int64(h.InFlight), int64(a.lim.HostInFlight), true},
		{"limits.max_pending_reviews_per_host", int64(h.Reviews), int64(a.lim.HostPendingReviews), true},
		{"limits.max_held_bytes_per_host", h.Bytes, int64(a.lim.HostHeldBytes), true},
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
func (a *Gate) count(r Refusal, value int64) {
	a.metrics.Refused(r.Server, r.Detail)
	a.refused.count(r, zap.Int64("value", value))
}

// RefuseSession counts and logs a host session refused by limit, as
// count does an upstream's request: whoever opens sessions in a loop must
// not fill the log either.
func (a *Gate) RefuseSession(limit string, value int64) {
	a.count(limitRefusal("host session", "", limit), value)
}

// take adds c to key's tallies. Callers hold a.mu.
func (a *Gate) take(key shareKey, c Claim) {
	a.servers[key.server] = a.servers[key.server].Add(c)
	a.shares[key] = a.shares[key].Add(c)
}

// give subtracts c from key's tallies, forgetting tallies back at zero
// (host sessions come and go). Callers hold a.mu.
func (a *Gate) give(key shareKey, c Claim) {
	if s := a.servers[key.server].sub(c); s == (Claim{}) {
		delete(a.servers, key.server)
	} else {
		a.servers[key.server] = s
	}
	if h := a.shares[key].sub(c); h == (Claim{}) {
		delete(a.shares, key)
	} else {
		a.shares[key] = h
	}
}

// Grow adds c to what h holds, or refuses, naming the limit, and then h
// holds what it held before. A released or nil hold refuses nothing and
// takes nothing.
func (h *Hold) Grow(c Claim) *jsonrpc.Error {
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
	h.c = h.c.Add(c)
	return nil
}

// Release gives back what h holds. It may be called any number of times,
// and on a nil hold.
func (h *Hold) Release() {
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

// Close refuses every later Acquire: the firewall is stopping.
func (a *Gate) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
}

// Drain waits until every hold is released, or until timeout, and
// reports whether all were.
func (a *Gate) Drain(timeout time.Duration) bool {
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

// Held is what server holds now, over all host sessions.
func (a *Gate) Held(server string) Claim {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.servers[server]
}

// Refusals is how many requests of server limit refused so far.
func (a *Gate) Refusals(server, limit string) int64 {
	return a.refused.total(limitRefusal("upstream request", server, limit))
}

// Idle reports whether nothing is held: no hold unreleased, no tally left.
func (a *Gate) Idle() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.holds == 0 && len(a.servers) == 0 && len(a.shares) == 0
}

// Refuse counts and logs a refusal the relay made of what an upstream or a
// host sent (a capability not offered, no host to answer, a foreign
// progress token), as the gate's own are: more are fields of this one
// refusal for its line.
func (a *Gate) Refuse(r Refusal, more ...zap.Field) {
	a.refused.count(r, more...)
}

// LogTotals writes one line per kind of refusal whose lines left some out,
// with the total: the firewall is stopping.
func (a *Gate) LogTotals() { a.refused.logTotals() }

// orDefault is v, or def where v is unset (zero or less).
func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
