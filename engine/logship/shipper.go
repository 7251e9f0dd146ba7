// Package logship ships decision-log events off the machine through OPA's
// own decision-log plugin (v1/plugins/logs): it batches events into gzip'd
// JSON arrays, uploads them to a service, retries with OPA's backoff and
// drops the oldest when its buffer is full, exactly as OPA does, because it
// is OPA's plugin. The events it takes are already masked (engine builds
// them); nothing here reads what an upstream wrote.
package logship

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"go.uber.org/zap"
)

// Shipper hands events to OPA's decision-log plugin, run by a plugins
// manager of its own that holds one service and no policy.
type Shipper struct {
	manager *plugins.Manager
	plugin  *logs.Plugin
	// counters is the plugin's metrics: its drop counters are the events
	// lost.
	counters metrics.Metrics
	// shared is embedded in every event's metrics, which the plugin only
	// reads through All.
	shared  metrics.Metrics
	written atomic.Int64
	failed  atomic.Int64 // events the plugin refused to take, or too large to give it
	log     *zap.Logger
}

// Start starts the plugin uploading to cfg's service. The manager's store
// is empty and it compiles no policy, so the plugin's own mask and drop
// policies (data.system.log.mask and .drop) are undefined for every event:
// nothing an upstream sends can reach them, and the events go as engine
// masked them.
func Start(ctx context.Context, cfg Config, log *zap.Logger) (*Shipper, error) {
	raw, err := cfg.managerConfig()
	if err != nil {
		return nil, err
	}
	m, err := plugins.New(raw, cfg.instanceID(), inmem.New(), plugins.Logger(newOPALogger(log)))
	if err != nil {
		return nil, fmt.Errorf("decision_log.service: %w", err)
	}
	pcfg, err := logs.NewConfigBuilder().WithBytes(m.Config.DecisionLogs).WithServices(m.Services()).Parse()
	if err != nil {
		return nil, fmt.Errorf("decision_log.service: %w", err)
	}
	s := &Shipper{manager: m, counters: metrics.New(), shared: metrics.New(), log: log}
	s.plugin = logs.New(pcfg, m).WithMetrics(s.counters)
	m.Register(logs.Name, s.plugin)
	if err := m.Start(ctx); err != nil {
		return nil, fmt.Errorf("decision_log.service: %w", err)
	}
	return s, nil
}

// MaxEventBytes bounds the input and result of an event the plugin is
// given. Its event buffer is bounded in events, not bytes, and holds each
// until the next upload (minutes apart), while a masked event grows with
// the number of texts an upstream puts in a request (a digest for each: a
// request of 100,000 one-letter texts within validation's limits makes an
// event of about 10 MB), so the buffer alone would let an upstream hold
// buffer_size_limit_events times that. A decision's event is a few KiB;
// one past the bound is lost, and counted, here rather than held (the
// plugin would drop most of them anyway, past its 32 KiB compressed
// upload limit). The file sink still writes it.
const MaxEventBytes = 256 << 10

// Ship hands one event to the plugin's buffer; it never waits on the
// network. The plugin puts its manager's labels on the event. A decision's
// request may be over; its event is still shipped, so Ship takes no
// context of the request's. An event past MaxEventBytes is lost.
func (s *Shipper) Ship(ev logs.EventV1) {
	if n := rawSize(ev.Input) + rawSize(ev.Result); n > MaxEventBytes {
		s.failed.Add(1)
		s.log.Warn("decision log service: event too large to buffer, lost", zap.String("decision_id", ev.DecisionID),
			zap.Int("bytes", n), zap.Int("limit", MaxEventBytes))
		return
	}
	if err := s.plugin.Log(context.Background(), info(ev, s.shared)); err != nil {
		s.failed.Add(1)
		s.log.Error("decision log service: event not buffered", zap.String("decision_id", ev.DecisionID), zap.Error(err))
		return
	}
	s.written.Add(1)
}

// Stop uploads what is buffered, trying until timeout has passed, and
// stops the plugin; events still buffered then are lost. It returns by
// timeout plus stopGrace even if an upload already under way hangs (the
// plugin's loop finishes it before it stops), so serve's exit is bounded
// whatever the collector does.
func (s *Shipper) Stop(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.manager.Stop(ctx)
	}()
	select {
	case <-done:
	case <-time.After(timeout + stopGrace):
		s.log.Warn("decision log service: stopped waiting for the last upload; buffered events are lost")
	}
}

// stopGrace is how long Stop waits past its timeout for the plugin's loop.
const stopGrace = time.Second

// rawSize is the length of v when it holds raw JSON, as engine boxes an
// event's input and result; 0 otherwise.
func rawSize(v *any) int {
	if v == nil {
		return 0
	}
	raw, _ := (*v).(json.RawMessage)
	return len(raw)
}
