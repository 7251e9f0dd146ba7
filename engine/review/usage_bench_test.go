package review

import (
	"fmt"
	"path/filepath"
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
