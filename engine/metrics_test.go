package engine

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// TestDecisionsCounted: every decision the engine commits, a screened
// blocker included, is counted once by server, kind, stage and outcome,
// and its steps are timed.
func TestDecisionsCounted(t *testing.T) {
	m := telemetry.New(telemetry.Options{Servers: []string{"github-mcp"}})
	e, _ := newTestEngine(t, Config{Metrics: m})
	pass := e.Decide(t.Context(), sampling("github-mcp", textParams("hello", 64)))
	blocked, _ := e.Screen(t.Context(), sampling("github-mcp", `{"messages":[]}`))
	other := e.Decide(t.Context(), sampling("not-configured", textParams("hello", 64)))
	for _, v := range []Verdict{pass, blocked, other} {
		t.Logf("verdict %s %v", v.Outcome, v.ReasonCodes())
	}
	want := map[string]float64{
		"github-mcp/" + pass.Outcome.String():    1,
		"github-mcp/" + blocked.Outcome.String(): 1,
		"other/" + other.Outcome.String():        1,
	}
	if pass.Outcome == blocked.Outcome {
		want["github-mcp/"+pass.Outcome.String()] = 2
	}
	reg := m.Registry()
	n, err := testutil.GatherAndCount(reg, "mcpxfw_decisions_total")
	if err != nil || n == 0 {
		t.Fatalf("GatherAndCount = %d, %v", n, err)
	}
	mfs, _ := reg.Gather()
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "mcpxfw_decisions_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			if v := s.GetCounter().GetValue(); v > 0 {
				l := map[string]string{}
				for _, p := range s.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				got[l["server"]+"/"+l["outcome"]] += v
			}
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("decisions %s = %v, want %v (all: %v)", k, got[k], w, got)
		}
	}
	if c, _ := testutil.GatherAndCount(reg, "mcpxfw_store_commit_duration_seconds"); c != 1 {
		t.Errorf("commit histogram series = %d, want 1", c)
	}
}
