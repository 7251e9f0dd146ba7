package engine

import (
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// roundTripCompletion is the host's answer in BenchmarkRoundTrip.
const roundTripCompletion = `{"role":"assistant","model":"bench-model","stopReason":"endTurn","content":{"type":"text","text":"The change renames a field and updates its callers."}}`

// BenchmarkRoundTrip measures the engine's whole share of a permitted
// sampling round trip on the SQLite store, as the pipeline runs it: the
// request's Decide, then the completion's Check, which settles the
// request's charge (the settlement's UPDATE and the result's decision in
// one write transaction). It reports round trips per second of wall time
// and of the process's CPU, p50 and p99 per round trip. Run with -cpu 1:
//
//	go test -run '^$' -bench '^BenchmarkRoundTrip$' -cpu 1 -benchtime 3s ./engine/
func BenchmarkRoundTrip(b *testing.B) {
	for _, shape := range decideBenchShapes[:2] {
		s := sampling("github-mcp", string(decideBenchRequest(b, shape.n, shape.size)))
		b.Run(shape.name, func(b *testing.B) {
			st, err := review.Open(filepath.Join(b.TempDir(), "state"), zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			e, err := New(b.Context(), Config{Policy: PolicyConfig{Dir: shippedPolicies, Data: unlimitedBudget(b)}, ReviewTimeout: time.Minute}, st, zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			roundTrip(b, e, s)
			own0 := processCPU(b)
			timeDecisions(b, func() { roundTrip(b, e, s) })
			if cpu := processCPU(b) - own0; cpu > 0 {
				b.ReportMetric(float64(b.N)/cpu.Seconds(), "roundtrips/cpu-s")
			}
		})
	}
}

// roundTrip decides s and checks the completion, as the pipeline does
// for a request that passes both stages.
func roundTrip(b *testing.B, e *Engine, s Request) {
	v := e.Decide(b.Context(), s)
	if v.Outcome != OutcomePass {
		b.Fatalf("request stage %v: %+v", v.Outcome, v)
	}
	s.Validated, s.Reservation = v.Validated, v.Reservation
	if v := e.Check(b.Context(), s, []byte(roundTripCompletion)); v.Outcome != OutcomePass {
		b.Fatalf("result stage %v: %+v", v.Outcome, v)
	}
}
