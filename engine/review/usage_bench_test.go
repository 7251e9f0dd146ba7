package review

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
)

// benchStore is a store, in the pass's backend (backend_test.go), holding
// n usage decisions of server "a", spread evenly over the span before at.
func benchStore(b *testing.B, n int, span time.Duration, at time.Time) *Store {
	b.Helper()
	s, err := openBackend(filepath.Join(b.TempDir(), "state"), zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	for i := range n {
		created := at.Add(-span + span*time.Duration(i)/time.Duration(n))
		_, err := s.Commit(b.Context(), Entry{
			Decision: Decision{ID: fmt.Sprintf("dc-%d", i), Server: "a", Stage: StageRequest, Outcome: "pass", CreatedAt: created},
			Usage:    Usage{Requests: 1, RequestedTokens: 100, Tokens: 100},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkUsageRead reads the default windows of a server with n
// decisions in the last few seconds (a burst, as in the relay benchmark)
// or spread over the last hour (a steady server).
func BenchmarkUsageRead(b *testing.B) {
	for _, shape := range []struct {
		name string
		span time.Duration
	}{{"burst", 5 * time.Second}, {"steady", time.Hour}} {
		for _, n := range []int{0, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				at := now()
				s := benchStore(b, n, shape.span, at)
				r, err := s.UsageReader(b.Context(), usageWindows)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := r.Read(b.Context(), "a", at); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCommit commits one decision with its usage, as the engine does
// twice per sampling round trip.
func BenchmarkCommit(b *testing.B) {
	s := benchStore(b, 0, 0, now())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		_, err := s.Commit(b.Context(), Entry{
			Decision: Decision{ID: fmt.Sprintf("dc-%d", i), Server: "a", Stage: StageRequest, Outcome: "pass"},
			Usage:    Usage{Requests: 1, RequestedTokens: 100, Tokens: 100},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCharge measures a decision's read-decide-commit step
// (Charge), with a decide that costs nothing, so the figures are the
// store's alone:
//
//   - read+commit: Read then Commit from one goroutine, the way decisions
//     were made before Charge, for comparison (on PostgreSQL that Commit,
//     a charge, now waits for the server's turn too).
//   - serial: Charge from one goroutine.
//   - servers: Charge from parallel goroutines, each on a server of its
//     own: no contention for a server's turn.
//   - one-server: the same goroutines all charging one server: every
//     decision waits for the one before it.
//   - replicas: two Stores on one store (two processes or replicas), the
//     goroutines of both charging one server.
//
// Each reports decisions/s. -cpu sets the parallel goroutines.
func BenchmarkCharge(b *testing.B) {
	pass := func(id, server string) func(map[string]Usage) (Entry, error) {
		return func(map[string]Usage) (Entry, error) {
			return Entry{Decision: Decision{ID: id, Server: server, Stage: StageRequest, Outcome: "pass"},
				Usage: Usage{Requests: 1, RequestedTokens: 100, Tokens: 100}}, nil
		}
	}
	var seq atomic.Int64
	nextID := func() string { return fmt.Sprintf("dc-%d", seq.Add(1)) }
	b.Run("read+commit", func(b *testing.B) {
		s := benchStore(b, 0, 0, now())
		r := benchReader(b, s)
		timeCharges(b, func() {
			u, err := r.Read(b.Context(), "a", now())
			if err == nil {
				var e Entry
				e, _ = pass(nextID(), "a")(u)
				_, err = s.Commit(b.Context(), e)
			}
			if err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("serial", func(b *testing.B) {
		r := benchReader(b, benchStore(b, 0, 0, now()))
		timeCharges(b, func() {
			if _, err := r.Charge(b.Context(), "a", pass(nextID(), "a")); err != nil {
				b.Fatal(err)
			}
		})
	})
	parallel := func(b *testing.B, readers []*UsageReader, server func() string) {
		var next atomic.Int64
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			r, srv := readers[int(next.Add(1))%len(readers)], server()
			for pb.Next() {
				if _, err := r.Charge(b.Context(), srv, pass(nextID(), srv)); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
	}
	b.Run("servers", func(b *testing.B) {
		var n atomic.Int64
		parallel(b, []*UsageReader{benchReader(b, benchStore(b, 0, 0, now()))},
			func() string { return fmt.Sprintf("s%d", n.Add(1)) })
	})
	b.Run("one-server", func(b *testing.B) {
		parallel(b, []*UsageReader{benchReader(b, benchStore(b, 0, 0, now()))}, func() string { return "a" })
	})
	b.Run("replicas", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "state")
		readers := make([]*UsageReader, 2)
		for i := range readers {
			s, err := openBackend(dir, zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			readers[i] = benchReader(b, s)
		}
		parallel(b, readers, func() string { return "a" })
	})
}

func benchReader(b *testing.B, s *Store) *UsageReader {
	r, err := s.UsageReader(b.Context(), usageWindows)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// timeCharges runs op b.N times and reports decisions/s.
func timeCharges(b *testing.B, op func()) {
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
}
