package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Descriptions of the metrics read at scrape time from Sources.
var (
	descRevision = prometheus.NewDesc("mcpxfw_policy_revision_info",
		"The policy revision deciding now (always 1; the revision is the label).", []string{"revision"}, nil)
	descReloads = prometheus.NewDesc("mcpxfw_policy_reloads_total",
		"Policy load attempts since start-up, the first included, by result (ok, compile_error, download_error, verify_error).", []string{"result"}, nil)
	descLoadedAt = prometheus.NewDesc("mcpxfw_policy_loaded_timestamp_seconds",
		"When the deciding revision started deciding (Unix time).", nil, nil)
	descReloadFailing = prometheus.NewDesc("mcpxfw_policy_reload_failing",
		"1 when the last policy load attempt failed (the previous revision keeps deciding), else 0.", nil, nil)
	descLogWritten = prometheus.NewDesc("mcpxfw_decision_log_lines_total",
		"Decision-log lines a sink took, by sink (file, service).", []string{"sink"}, nil)
	descLogLost = prometheus.NewDesc("mcpxfw_decision_log_lost_total",
		"Decision-log lines lost by a sink: failed writes, or a full buffer's drops.", []string{"sink"}, nil)
	descPending = prometheus.NewDesc("mcpxfw_reviews_pending",
		"Reviews waiting for a person, read from the store (every replica sharing it sees the same).", []string{"server", "stage"}, nil)
	descOldest = prometheus.NewDesc("mcpxfw_reviews_pending_oldest_age_seconds",
		"Age of the oldest pending review; 0 when none waits.", []string{"server", "stage"}, nil)
	descBudgetRequests = prometheus.NewDesc("mcpxfw_budget_requests",
		"Requests a server sent within a usage window (what input.usage gives the policy), read from the store.", []string{"server", "window"}, nil)
	descBudgetTokens = prometheus.NewDesc("mcpxfw_budget_tokens",
		"Tokens charged against a server's budget within a usage window, read from the store.", []string{"server", "window"}, nil)
	descInputsDropped = prometheus.NewDesc("mcpxfw_replay_inputs_dropped_total",
		"Decisions whose policy input was not kept for replay: its queue full, serve stopping, or a failed write.", nil, nil)
	descStoreUp = prometheus.NewDesc("mcpxfw_store_up",
		"1 when this scrape's reads of the store succeeded within their deadline, else 0.", nil, nil)
)

// scrapeCollector reads, at every scrape, what other parts own: the
// engine's policy, decision-log and kept-input counts, and the store's queue and
// budgets (bounded by the store timeout; a failure is mcpxfw_store_up 0,
// never a failed scrape).
type scrapeCollector struct{ m *Metrics }

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRevision, descReloads, descLoadedAt, descReloadFailing, descLogWritten, descLogLost,
		descPending, descOldest, descBudgetRequests, descBudgetTokens, descStoreUp, descShadowRevision, descShadowFailing,
		descInputsDropped} {
		ch <- d
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.m.sources()
	if src.Policy != nil {
		collectPolicy(ch, src.Policy())
	}
	if src.Shadow != nil {
		collectShadow(ch, src.Shadow())
	}
	if src.DecisionLog != nil {
		collectLog(ch, src.DecisionLog())
	}
	if src.InputsDropped != nil {
		ch <- prometheus.MustNewConstMetric(descInputsDropped, prometheus.CounterValue, float64(src.InputsDropped()))
	}
	if src.Pending != nil {
		c.collectStore(ch, c.m.readStore(context.Background()))
	}
}

func collectPolicy(ch chan<- prometheus.Metric, p Policy) {
	if p.Revision != "" {
		ch <- prometheus.MustNewConstMetric(descRevision, prometheus.GaugeValue, 1, p.Revision)
		ch <- prometheus.MustNewConstMetric(descLoadedAt, prometheus.GaugeValue, float64(p.LoadedAt.UnixNano())/1e9)
	}
	for _, r := range reloadResults {
		ch <- prometheus.MustNewConstMetric(descReloads, prometheus.CounterValue, float64(p.Reloads[r]), r)
	}
	ch <- prometheus.MustNewConstMetric(descReloadFailing, prometheus.GaugeValue, flag(p.LastError != ""))
}

func collectLog(ch chan<- prometheus.Metric, sinks []LogSink) {
	written, lost := map[string]int64{}, map[string]int64{}
	for _, s := range sinks {
		name := sinkNames[index(sinkNames, s.Sink)]
		written[name] += s.Written
		lost[name] += s.Lost
	}
	for name := range written {
		ch <- prometheus.MustNewConstMetric(descLogWritten, prometheus.CounterValue, float64(written[name]), name)
		ch <- prometheus.MustNewConstMetric(descLogLost, prometheus.CounterValue, float64(lost[name]), name)
	}
}

func (c *scrapeCollector) collectStore(ch chan<- prometheus.Metric, v storeView) {
	ch <- prometheus.MustNewConstMetric(descStoreUp, prometheus.GaugeValue, flag(v.Err == nil))
	if v.Pending == nil && v.Err != nil {
		return // nothing read: no numbers rather than false zeros
	}
	now := time.Now()
	for key, p := range c.m.pendingBy(v) {
		age := 0.0
		if p.Count > 0 {
			age = max(now.Sub(p.Oldest).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(p.Count), key[0], key[1])
		ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, age, key[0], key[1])
	}
	for server, windows := range v.Usage {
		for _, w := range c.m.windows {
			u := windows[w]
			ch <- prometheus.MustNewConstMetric(descBudgetRequests, prometheus.GaugeValue, float64(u.Requests), server, w)
			ch <- prometheus.MustNewConstMetric(descBudgetTokens, prometheus.GaugeValue, float64(u.Tokens), server, w)
		}
	}
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
