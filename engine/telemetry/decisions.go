package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Buckets, chosen for what each histogram measures. Validation and policy
// evaluation take tens to hundreds of microseconds (BENCHMARKS.md); a
// store commit a fraction of a millisecond on SQLite, milliseconds on
// PostgreSQL, seconds when a lock is contended.
var (
	fastBuckets   = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .1}
	commitBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5}
)

// decisionMetrics count decisions and time their steps. Every series is
// made up front and kept in arrays, so recording a decision is a map read
// (the server) and array indexing: nothing is allocated or hashed per
// label value on the hot path.
type decisionMetrics struct {
	byServer map[string]*[3][2][4]prometheus.Counter // kind, stage, outcome
	validate [3][2]prometheus.Observer               // kind, stage
	eval     [3][2]prometheus.Observer
	commit   prometheus.Observer
}

func newDecisionMetrics(reg *prometheus.Registry, servers []string) *decisionMetrics {
	count := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpxfw_decisions_total",
		Help: "Decisions made by this process, by server, kind (sampling, elicitation, roots), stage (request, result) and outcome (pass, escalate, blocker, error)."},
		[]string{"server", "kind", "stage", "outcome"})
	validate := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpxfw_validation_duration_seconds",
		Help: "Time structural validation of a request or result took.", Buckets: fastBuckets}, []string{"kind", "stage"})
	eval := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpxfw_policy_eval_duration_seconds",
		Help: "Time evaluating the Rego policy for one decision took.", Buckets: fastBuckets}, []string{"kind", "stage"})
	commit := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mcpxfw_store_commit_duration_seconds",
		Help: "Time writing one decision (and its review, usage) to the store took.", Buckets: commitBuckets})
	reg.MustRegister(count, validate, eval, commit)
	d := &decisionMetrics{byServer: make(map[string]*[3][2][4]prometheus.Counter, len(servers)), commit: commit}
	for _, s := range servers {
		var c [3][2][4]prometheus.Counter
		for k, kind := range kinds {
			for st, stage := range stages {
				for o, outcome := range outcomes {
					c[k][st][o] = count.WithLabelValues(s, kind, stage, outcome)
				}
			}
		}
		d.byServer[s] = &c
	}
	for k, kind := range kinds {
		for st, stage := range stages {
			d.validate[k][st] = validate.WithLabelValues(kind, stage)
			d.eval[k][st] = eval.WithLabelValues(kind, stage)
		}
	}
	return d
}

// Decision is one decision's record: its labels, and how long validation,
// policy evaluation and the store's commit took (a step that did not run
// is zero and not observed).
type Decision struct {
	Server, Kind, Stage, Outcome string
	Validate, Eval, Commit       time.Duration
}

// Decided records d.
func (m *Metrics) Decided(d Decision) {
	if m == nil {
		return
	}
	dm := m.decisions
	byKind, ok := dm.byServer[d.Server]
	if !ok {
		byKind = dm.byServer[Other]
	}
	k, st := index(kinds, d.Kind), index(stages, d.Stage)
	byKind[k][st][index(outcomes, d.Outcome)].Inc()
	observe(dm.validate[k][st], d.Validate)
	observe(dm.eval[k][st], d.Eval)
	observe(dm.commit, d.Commit)
}

// observe records d in seconds when the step ran.
func observe(o prometheus.Observer, d time.Duration) {
	if d > 0 {
		o.Observe(d.Seconds())
	}
}
