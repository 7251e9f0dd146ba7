package telemetry

import (
	"context"
	"time"
)

// Check is one readiness condition and how it stands.
type Check struct {
	Name  string `json:"name"` // "policy", "store" or "upstream NAME"
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Readiness checks, each with what a failure means. A failed policy
// reload is not one: the last good revision keeps deciding.
func (m *Metrics) Readiness(ctx context.Context) []Check {
	src := m.sources()
	checks := []Check{policyCheck(src), m.storeCheck(ctx, src)}
	for _, u := range m.Upstreams() {
		c := Check{Name: "upstream " + u.Server, OK: u.Up}
		if !u.Up {
			c.Error = u.Reason + " (down since " + u.DownSince.Format(time.RFC3339) + ")"
		}
		checks = append(checks, c)
	}
	return checks
}

// Ready reports whether every check passed.
func Ready(checks []Check) bool {
	for _, c := range checks {
		if !c.OK {
			return false
		}
	}
	return true
}

func policyCheck(src Sources) Check {
	if src.Policy == nil || src.Policy().Revision == "" {
		return Check{Name: "policy", Error: "no policy loaded"}
	}
	return Check{Name: "policy", OK: true}
}

// storeCheck probes a write, bounded by the store timeout; concurrent
// checks share one probe (writeProbe).
func (m *Metrics) storeCheck(ctx context.Context, src Sources) Check {
	err := errNoStore
	if src.Writable != nil {
		err = m.probe.result(ctx, m.timeout, src.Writable)
	}
	if err != nil {
		return Check{Name: "store", Error: err.Error()}
	}
	return Check{Name: "store", OK: true}
}
