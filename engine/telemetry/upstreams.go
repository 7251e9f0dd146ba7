package telemetry

import (
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Why an upstream is down: fixed words, never the error an upstream's
// process or stream produced (which it may have written itself).
const (
	ReasonStartFailed  = "start failed: its command or URL could not be reached, or it failed to initialize"
	ReasonStartTimeout = "start timed out: it did not initialize within the connect timeout"
	ReasonLost         = "connection lost: its process exited or its stream broke"
)

// upstreams tracks, per configured server, the sessions this process holds
// to it, from the relay's own events: the up gauge, the start, restart and
// loss counters, and what /readyz and status say of it.
type upstreams struct {
	mu    sync.Mutex
	state map[string]*upstreamState

	up, sessions        *prometheus.GaugeVec
	starts              *prometheus.CounterVec
	restarts, lostCount *prometheus.CounterVec
}

// upstreamState is one server's sessions: live (connected, not lost),
// lost (ended without the firewall closing them, still held by a host's
// link, whose requests to it fail), and whether the last start failed.
type upstreamState struct {
	live, lost int
	failed     string    // the last start's failure reason; "" after a success
	down       bool      // it was down when it last started: the next start is a restart
	since      time.Time // when it went down; zero while it is up
}

func newUpstreams(reg *prometheus.Registry, servers []string) *upstreams {
	u := &upstreams{state: map[string]*upstreamState{},
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpxfw_upstream_up",
			Help: "1 unless the server is down: its last start failed, or a session to it was lost and is still held. 1 too before any host needed it."}, []string{"server"}),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpxfw_upstream_sessions",
			Help: "Sessions to the server this process holds and that are connected."}, []string{"server"}),
		starts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpxfw_upstream_starts_total",
			Help: "Upstream sessions started (a process or an HTTP session), by result (ok, error)."}, []string{"server", "result"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpxfw_upstream_restarts_total",
			Help: "Successful starts of a server that was down (its last start failed or a session to it was lost)."}, []string{"server"}),
		lostCount: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpxfw_upstream_lost_total",
			Help: "Upstream sessions that ended without the firewall closing them (process exited, stream broke)."}, []string{"server"}),
	}
	reg.MustRegister(u.up, u.sessions, u.starts, u.restarts, u.lostCount)
	for _, s := range servers {
		u.state[s] = &upstreamState{}
		u.up.WithLabelValues(s).Set(1)
		u.sessions.WithLabelValues(s)
		u.restarts.WithLabelValues(s)
		u.lostCount.WithLabelValues(s)
		for _, r := range startResults {
			u.starts.WithLabelValues(s, r)
		}
	}
	return u
}

// change applies f to server's state and updates its gauges. Upstream
// events are per session, not per decision: a lock is cheap here.
func (u *upstreams) change(server string, f func(*upstreamState)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.state[server]
	wasDown := st.isDown()
	f(st)
	u.sessions.WithLabelValues(server).Set(float64(st.live))
	up := 1.0
	switch {
	case st.isDown() && !wasDown:
		st.since, up = time.Now(), 0
	case st.isDown():
		up = 0
	default:
		st.since = time.Time{}
	}
	u.up.WithLabelValues(server).Set(up)
}

func (st *upstreamState) isDown() bool { return st.lost > 0 || st.live == 0 && st.failed != "" }

// reason is why st is down, "" when it is not.
func (st *upstreamState) reason() string {
	switch {
	case st.lost > 0:
		return ReasonLost
	case st.live == 0 && st.failed != "":
		return st.failed
	}
	return ""
}

// UpstreamStarted records a session to server that connected.
func (m *Metrics) UpstreamStarted(server string) {
	if m == nil {
		return
	}
	s := m.server(server)
	m.ups.starts.WithLabelValues(s, "ok").Inc()
	m.ups.change(s, func(st *upstreamState) {
		if st.down || st.isDown() {
			m.ups.restarts.WithLabelValues(s).Inc()
		}
		st.live++
		st.failed, st.down = "", false
	})
}

// UpstreamStartFailed records a session to server that could not start;
// reason is one of the Reason* words.
func (m *Metrics) UpstreamStartFailed(server, reason string) {
	if m == nil {
		return
	}
	s := m.server(server)
	m.ups.starts.WithLabelValues(s, "error").Inc()
	m.ups.change(s, func(st *upstreamState) { st.failed, st.down = reason, true })
}

// UpstreamLost records a session to server that ended without the
// firewall closing it; it counts as down until the link holding it closes
// (UpstreamLostClosed).
func (m *Metrics) UpstreamLost(server string) {
	if m == nil {
		return
	}
	s := m.server(server)
	m.ups.lostCount.WithLabelValues(s).Inc()
	m.ups.change(s, func(st *upstreamState) { st.live--; st.lost++; st.down = true })
}

// UpstreamClosed records a live session to server the firewall closed.
func (m *Metrics) UpstreamClosed(server string) {
	if m == nil {
		return
	}
	m.ups.change(m.server(server), func(st *upstreamState) { st.live-- })
}

// UpstreamLostClosed records that the link holding a lost session closed:
// no host's requests fail on it any more.
func (m *Metrics) UpstreamLostClosed(server string) {
	if m == nil {
		return
	}
	m.ups.change(m.server(server), func(st *upstreamState) { st.lost-- })
}

// Upstream is one server as /readyz and status report it.
type Upstream struct {
	Server string `json:"server"`
	Up     bool   `json:"up"`
	Reason string `json:"reason,omitempty"`
	// DownSince is when it went down; absent while it is up.
	DownSince *time.Time `json:"down_since,omitempty"`
	Sessions  int        `json:"sessions"`
}

// Upstreams reports every configured server (and Other when anything was
// recorded for it), sorted by name.
func (m *Metrics) Upstreams() []Upstream {
	if m == nil {
		return nil
	}
	m.ups.mu.Lock()
	defer m.ups.mu.Unlock()
	out := make([]Upstream, 0, len(m.ups.state))
	for name, st := range m.ups.state {
		if name == Other && *st == (upstreamState{}) {
			continue
		}
		out = append(out, st.report(name))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

// report is st as /readyz and status report it.
func (st *upstreamState) report(name string) Upstream {
	u := Upstream{Server: name, Up: !st.isDown(), Reason: st.reason(), Sessions: st.live}
	if !u.Up {
		since := st.since.UTC()
		u.DownSince = &since
	}
	return u
}
