package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/review/pgtest"
)

// BenchmarkDecideBackends measures the whole Decide of a permitted
// 10x400B request (usage read, validation, evaluation, commit of the
// decision and its usage) on each store backend in one run: the embedded
// SQLite file and a throwaway PostgreSQL cluster on a unix socket
// (skipped where PostgreSQL is not installed). Besides decisions/s and
// p50/p99 it reports decisions per second of CPU, the benchmark's own and,
// on PostgreSQL, the server's (decisions/cpu-s): what one core buys on
// each backend, whichever process spends it. Run with -cpu 1:
//
//	go test -run '^$' -bench '^BenchmarkDecideBackends$' -cpu 1 -benchtime 3s ./engine/
func BenchmarkDecideBackends(b *testing.B) {
	s := sampling("github-mcp", string(decideBenchRequest(b, 10, 400)))
	backends := []struct {
		name string
		open func(b *testing.B) (*review.Store, func() (time.Duration, error))
	}{
		{"sqlite", func(b *testing.B) (*review.Store, func() (time.Duration, error)) {
			st, err := review.Open(filepath.Join(b.TempDir(), "state"), zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			return st, func() (time.Duration, error) { return 0, nil }
		}},
		{"postgres", openPostgresBench},
	}
	for _, backend := range backends {
		for _, v := range []keeping{{}, {"+keep", true, 0}, {"+keep+bound", true, 16 << 20}} {
			b.Run(backend.name+v.suffix, func(b *testing.B) { benchDecideOn(b, backend.open, s, v) })
		}
	}
}

// keeping is whether a benchmark keeps each decision's policy input, and
// within what bound (review.Store.KeepInputsBytes; 0: none). 16 MiB, a
// sixteenth of serve's default, trims every MiB the benchmark's
// decisions write, deleting as many as it writes once full.
type keeping struct {
	suffix string
	keep   bool
	bound  int64
}

// benchDecideOn is one backend's sub-benchmark: with k.keep, each
// decision also keeps its policy input for replay (Config.KeepInputs), as
// serve does when replay.keep is set, and the CPU counted includes the
// keeper's batched writes of every one of them, and its trims.
func benchDecideOn(b *testing.B, open func(b *testing.B) (*review.Store, func() (time.Duration, error)), s Request, k keeping) {
	st, serverCPU := open(b)
	b.Cleanup(func() { st.Close() })
	st.KeepInputsBytes = k.bound
	keep := k.keep
	e, err := New(b.Context(), Config{Policy: PolicyConfig{Dir: shippedPolicies, Data: unlimitedBudget(b)}, ReviewTimeout: time.Minute, KeepInputs: keep}, st, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	if v := e.Decide(b.Context(), s); v.Outcome != OutcomePass {
		b.Fatalf("the benchmark's request is %v, want a pass: %+v", v.Outcome, v)
	}
	own0, server0 := processCPU(b), cpuOf(b, serverCPU)
	timeDecisions(b, func() {
		if v := e.Decide(b.Context(), s); v.Outcome != OutcomePass {
			b.Fatalf("decision %v: %+v", v.Outcome, v)
		}
	})
	if e.keeper != nil {
		e.keeper.Flush() // the inputs' writes are the decisions' cost too
		b.ReportMetric(float64(e.InputsDropped())/float64(b.N), "inputs-dropped/op")
	}
	cpu := processCPU(b) - own0 + cpuOf(b, serverCPU) - server0
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "decisions/cpu-s")
	}
}

// openPostgresBench starts a throwaway cluster for one sub-benchmark and
// opens a store on it; the second result reads the server's CPU time.
func openPostgresBench(b *testing.B) (*review.Store, func() (time.Duration, error)) {
	c := pgtest.New(b)
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	st, err := review.OpenURL(ctx, c.URL("postgres"), zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	return st, c.CPU
}

func cpuOf(b *testing.B, read func() (time.Duration, error)) time.Duration {
	b.Helper()
	d, err := read()
	if err != nil {
		b.Fatal(err)
	}
	return d
}
