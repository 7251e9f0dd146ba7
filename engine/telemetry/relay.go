package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Buckets for waits on people and models: a host's answer is a model's
// completion or a user's form (a second to minutes, bounded by
// sampling.host_timeout, 5m by default); a review waits for an operator
// (seconds to the review timeout, an hour by default).
var (
	answerBuckets = []float64{.1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	reviewBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200}
)

// relayMetrics are what the relay alone sees: the host's answers, the
// reviews its requests waited on, and the requests its limits refused.
// As decisionMetrics, every series is made up front.
type relayMetrics struct {
	answers  map[string]*[3][3]prometheus.Observer // kind, result
	waits    map[string]*[2]prometheus.Observer    // stage
	outcomes map[string]*[2][5]prometheus.Counter  // stage, review outcome
	refusals map[string][]prometheus.Counter       // by limit; server "" for http.max_sessions
}

func newRelayMetrics(reg *prometheus.Registry, servers []string) *relayMetrics {
	answer := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpxfw_host_answer_duration_seconds",
		Help: "Time the host took to answer a request the firewall let through (a completion, a form, a roots list), by result (ok, rejected by the user, error).", Buckets: answerBuckets},
		[]string{"server", "kind", "result"})
	wait := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpxfw_review_wait_duration_seconds",
		Help: "Time a request held for review waited for its outcome, in the process that held it.", Buckets: reviewBuckets},
		[]string{"server", "stage"})
	outcome := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpxfw_review_outcomes_total",
		Help: "Reviews settled for requests this process held, by outcome (approved, rejected, expired, abandoned, error)."},
		[]string{"server", "stage", "outcome"})
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpxfw_refusals_total",
		Help: "Requests (or host sessions, server \"\") refused at once because a configured limit was reached, by the limit's config key."},
		[]string{"server", "limit"})
	reg.MustRegister(answer, wait, outcome, refused)
	r := &relayMetrics{answers: map[string]*[3][3]prometheus.Observer{}, waits: map[string]*[2]prometheus.Observer{},
		outcomes: map[string]*[2][5]prometheus.Counter{}, refusals: map[string][]prometheus.Counter{}}
	for _, s := range servers {
		var a [3][3]prometheus.Observer
		var w [2]prometheus.Observer
		var o [2][5]prometheus.Counter
		for k, kind := range kinds {
			for i, res := range answerResults {
				a[k][i] = answer.WithLabelValues(s, kind, res)
			}
		}
		for st, stage := range stages {
			w[st] = wait.WithLabelValues(s, stage)
			for i, out := range reviewOutcomes {
				o[st][i] = outcome.WithLabelValues(s, stage, out)
			}
		}
		r.answers[s], r.waits[s], r.outcomes[s] = &a, &w, &o
	}
	for _, s := range append([]string{""}, servers...) {
		for _, l := range limits {
			if s == "" && l != "http.max_sessions" {
				continue
			}
			r.refusals[s] = append(r.refusals[s], refused.WithLabelValues(s, l))
		}
	}
	return r
}

// HostAnswered records how long the host took to answer a request of kind
// from server, and how (one of ok, rejected, error).
func (m *Metrics) HostAnswered(server, kind, result string, took time.Duration) {
	if m == nil {
		return
	}
	m.relay.answers[m.server(server)][index(kinds, kind)][index(answerResults, result)].Observe(took.Seconds())
}

// ReviewSettled records a review a request of server waited on: its
// outcome (approved, rejected, expired, abandoned; anything else is
// recorded as error) and how long the request waited. Each review is
// waited on by the one process that holds its request, so the sum over
// replicas counts every review once.
func (m *Metrics) ReviewSettled(server, stage, outcome string, waited time.Duration) {
	if m == nil {
		return
	}
	s, st := m.server(server), index(stages, stage)
	m.relay.waits[s][st].Observe(waited.Seconds())
	m.relay.outcomes[s][st][index(reviewOutcomes, outcome)].Inc()
}

// Refused records a request of server refused by limit (a config key);
// server "" is a host session refused by http.max_sessions.
func (m *Metrics) Refused(server, limit string) {
	if m == nil {
		return
	}
	if server != "" {
		server = m.server(server)
	}
	counters := m.relay.refusals[server]
	if server == "" {
		counters[0].Inc()
		return
	}
	counters[index(limits, limit)].Inc()
}
