package engine

import "time"

// timings are how long the steps of one decision took. The decision log
// reports them as OPA reports its own (metrics, in nanoseconds, named
// timer_*_ns), so the same dashboards read both.
type timings struct {
	validate, usage, eval time.Duration
	// commit is the store's write of the decision: reported in the
	// Prometheus metrics only, the decision log being written before it
	// is known to have ended (see recorded).
	commit time.Duration
}

// metrics is the decision log's "metrics" object, typed as EventV1 types
// it; steps that did not run are left out.
func (t timings) metrics() map[string]any {
	m := make(map[string]any, 3)
	add := func(name string, d time.Duration) {
		if d > 0 {
			m[name] = d.Nanoseconds()
		}
	}
	add("timer_validate_ns", t.validate)
	add("timer_usage_read_ns", t.usage)
	add("timer_rego_query_eval_ns", t.eval)
	return m
}
