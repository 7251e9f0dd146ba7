package telemetry

import "github.com/prometheus/client_golang/prometheus"

// The words mcpxfw_shadow_failures_total counts a shadow policy's
// failures under.
const (
	ShadowError   = "error"   // its evaluation failed (or it has not loaded)
	ShadowTimeout = "timeout" // its evaluation ran out of time
	ShadowDropped = "dropped" // it did not see the decision: its queue was full, or serve was stopping
)

var shadowFailures = []string{ShadowTimeout, ShadowDropped, ShadowError}

// shadowMetrics compare the shadow policy's outcomes with the active
// one's. As decisionMetrics, every series is made up front.
type shadowMetrics struct {
	byServer map[string]*[3][2][4][4]prometheus.Counter // kind, stage, active, shadow
	failures [3]prometheus.Counter
}

func newShadowMetrics(reg *prometheus.Registry, servers []string) *shadowMetrics {
	count := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpxfw_shadow_decisions_total",
		Help: "Decisions the shadow policy judged too, by server, kind, stage, the active policy's outcome and the shadow's (pass, escalate, blocker, error); active != shadow is a disagreement."},
		[]string{"server", "kind", "stage", "active", "shadow"})
	failed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpxfw_shadow_failures_total",
		Help: "Shadow policy evaluations that failed, by reason (error, timeout, dropped: not evaluated, its queue full or serve stopping). Never acted on."},
		[]string{"reason"})
	reg.MustRegister(count, failed)
	m := &shadowMetrics{byServer: make(map[string]*[3][2][4][4]prometheus.Counter, len(servers))}
	for i, r := range shadowFailures {
		m.failures[i] = failed.WithLabelValues(r)
	}
	for _, s := range servers {
		var c [3][2][4][4]prometheus.Counter
		for k, kind := range kinds {
			for st, stage := range stages {
				for a, active := range outcomes {
					for o, shadow := range outcomes {
						c[k][st][a][o] = count.WithLabelValues(s, kind, stage, active, shadow)
					}
				}
			}
		}
		m.byServer[s] = &c
	}
	return m
}

// ShadowDecision is one decision as the active and the shadow policy
// judged it (their Outcome words).
type ShadowDecision struct {
	Server, Kind, Stage, Active, Shadow string
}

// ShadowDecided counts d.
func (m *Metrics) ShadowDecided(d ShadowDecision) {
	if m == nil || m.shadow == nil {
		return
	}
	byKind, ok := m.shadow.byServer[d.Server]
	if !ok {
		byKind = m.shadow.byServer[Other]
	}
	byKind[index(kinds, d.Kind)][index(stages, d.Stage)][index(outcomes, d.Active)][index(outcomes, d.Shadow)].Inc()
}

// ShadowFailed counts one failure of the shadow policy (a Shadow* word).
func (m *Metrics) ShadowFailed(reason string) {
	if m == nil || m.shadow == nil {
		return
	}
	m.shadow.failures[index(shadowFailures, reason)].Inc()
}

// Shadow is what the engine reports of its shadow policy
// (engine.ShadowStatus): its load status, as Policy, and how its outcomes
// compared with the active policy's.
type Shadow struct {
	Policy
	// Disagreements counts decisions the two judged differently, by
	// active and shadow outcome; Agreements the rest.
	Disagreements []Disagreement `json:"disagreements"`
	Agreements    int64          `json:"agreements"`
	Errors        int64          `json:"errors"`
	Timeouts      int64          `json:"timeouts"`
	Dropped       int64          `json:"dropped"`
}

// Disagreement is how many decisions the active policy decided Active and
// the shadow Shadow.
type Disagreement struct {
	Active string `json:"active"`
	Shadow string `json:"shadow"`
	Count  int64  `json:"count"`
}

var (
	descShadowRevision = prometheus.NewDesc("mcpxfw_shadow_policy_revision_info",
		"The shadow policy revision judging beside the active one (always 1; the revision is the label).", []string{"revision"}, nil)
	descShadowFailing = prometheus.NewDesc("mcpxfw_shadow_policy_reload_failing",
		"1 when the shadow policy's last load attempt failed (its previous revision, if any, keeps judging), else 0.", nil, nil)
)

func collectShadow(ch chan<- prometheus.Metric, s Shadow) {
	if s.Revision != "" {
		ch <- prometheus.MustNewConstMetric(descShadowRevision, prometheus.GaugeValue, 1, s.Revision)
	}
	ch <- prometheus.MustNewConstMetric(descShadowFailing, prometheus.GaugeValue, flag(s.LastError != ""))
}
