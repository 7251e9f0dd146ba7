package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Options are what the metrics are made for.
type Options struct {
	// Servers are the configured server names: the only server label
	// values besides Other.
	Servers []string
	// Windows are the usage windows' names (the engine's defaults and the
	// configured ones): the budget metrics' window label values.
	Windows []string
	// StoreTimeout bounds each read of the store a scrape, a readiness
	// check or a status request makes; default DefaultStoreTimeout.
	StoreTimeout time.Duration
	// Shadow makes the shadow policy's metrics (shadow.go); without a
	// shadow policy they are left out.
	Shadow bool
}

// DefaultStoreTimeout bounds a scrape's store reads: well under
// Prometheus's default scrape timeout (10s), so a dead store shows as
// mcpxfw_store_up 0 instead of a failed scrape.
const DefaultStoreTimeout = 2 * time.Second

// Metrics is every mcpx-fw metric, in a registry of its own (never the
// process-wide default one, so tests and several Proxies in one process
// do not collide). Its recording methods are safe for concurrent use and
// do nothing on a nil *Metrics.
type Metrics struct {
	reg     *prometheus.Registry
	servers map[string]bool
	names   []string // configured servers, then Other
	windows []string
	timeout time.Duration
	src     atomic.Pointer[Sources]
	probe   writeProbe

	decisions *decisionMetrics
	shadow    *shadowMetrics
	relay     *relayMetrics
	ups       *upstreams
}

// New makes the metrics and registers them, with Go's runtime and the
// process's collectors, in a new registry.
func New(o Options) *Metrics {
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = DefaultStoreTimeout
	}
	m := &Metrics{reg: prometheus.NewRegistry(), servers: set(o.Servers), names: withOther(o.Servers),
		windows: append([]string(nil), o.Windows...), timeout: o.StoreTimeout}
	m.src.Store(&Sources{})
	m.decisions = newDecisionMetrics(m.reg, m.names)
	if o.Shadow {
		m.shadow = newShadowMetrics(m.reg, m.names)
	}
	m.relay = newRelayMetrics(m.reg, m.names)
	m.ups = newUpstreams(m.reg, m.names)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&scrapeCollector{m: m})
	return m
}

// Registry is the registry the metrics live in (the handler serves it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// server is name as a label value: name when configured, else Other.
func (m *Metrics) server(name string) string { return bounded(m.servers, name) }
