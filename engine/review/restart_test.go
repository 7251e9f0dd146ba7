package review

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review/pgtest"
)

// openOn opens a Store on database postgres of cluster c, as serve does,
// logging to log.
func openOn(t *testing.T, c *pgtest.Cluster, log *zap.Logger) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := OpenURL(ctx, c.URL("postgres"), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReadsOutlastServerRestart: every read on a Store whose pooled
// connections the server's restart killed succeeds on its first try: a
// read that meets a dead connection runs again on another.
func TestReadsOutlastServerRestart(t *testing.T) {
	postgresOnly(t, "a SQLite file has no server to restart")
	c := ownCluster(t)
	setup := openOn(t, c, zap.NewNop())
	it := mustAdd(t, setup, sampleItem("a"), time.Hour)
	if _, err := setup.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-r", Server: "a", Stage: StageRequest, Outcome: "pass"}, Usage: Usage{Requests: 1}}); err != nil {
		t.Fatal(err)
	}
	windows := map[string]time.Duration{"1h": time.Hour}
	// Each case prepares its read on s before the restart and runs it after.
	cases := []struct {
		name    string
		prepare func(t *testing.T, s *Store) (read func(ctx context.Context) error)
	}{
		{"Get", func(t *testing.T, s *Store) func(context.Context) error {
			return func(ctx context.Context) error { _, err := s.Get(ctx, it.ID); return err }
		}},
		{"List", func(t *testing.T, s *Store) func(context.Context) error {
			return func(ctx context.Context) error { _, err := s.List(ctx, Filter{}); return err }
		}},
		{"PendingIDs", func(t *testing.T, s *Store) func(context.Context) error {
			return func(ctx context.Context) error { _, err := s.PendingIDs(ctx); return err }
		}},
		{"Decision", func(t *testing.T, s *Store) func(context.Context) error {
			return func(ctx context.Context) error { _, err := s.Decision(ctx, "dc-r"); return err }
		}},
		{"UsageIn", func(t *testing.T, s *Store) func(context.Context) error {
			return func(ctx context.Context) error { _, err := s.UsageIn(ctx, "a", windows, time.Now()); return err }
		}},
		{"UsageReader", func(t *testing.T, s *Store) func(context.Context) error {
			r, err := s.UsageReader(t.Context(), windows)
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { _, err := r.Read(ctx, "a", time.Now()); return err }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openOn(t, c, zap.NewNop())
			quiet(t, s) // no heartbeat to clear the pool before the read under test
			read := tc.prepare(t, s)
			// Run it twice first, so the connection the read takes after
			// the restart (the pool hands out the last one given back) has
			// its statements prepared and was used within the second after
			// which pgx pings a connection before lending it: the read
			// itself meets the dead socket.
			for range 2 {
				if err := read(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Restart(); err != nil {
				t.Fatal(err)
			}
			if err := read(t.Context()); err != nil {
				t.Fatalf("%s after the restart: %v", tc.name, err)
			}
		})
	}
}

// TestPoolWriteIsNotRetriedAfterRestart: a statement on the pool that
// writes (TakeContinuation's DELETE … RETURNING) is not run again when its
// connection turns out dead: it fails, and the continuation is still
// there for the host's retry, which takes it once.
func TestPoolWriteIsNotRetriedAfterRestart(t *testing.T) {
	postgresOnly(t, "a SQLite file has no server to restart")
	c := ownCluster(t)
	s := openOn(t, c, zap.NewNop())
	quiet(t, s)
	if err := s.PutContinuation(t.Context(), sampleContinuation("n-1")); err != nil {
		t.Fatal(err)
	}
	for range 2 { // prepares the DELETE on the connection the take after the restart gets (TestReadsOutlastServerRestart)
		if _, err := s.TakeContinuation(t.Context(), "n-absent", "alpha", "digest-1"); !errors.Is(err, ErrContinuationGone) {
			t.Fatal(err)
		}
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	_, err := s.TakeContinuation(t.Context(), "n-1", "alpha", "digest-1")
	if err == nil || errors.Is(err, ErrContinuationGone) {
		t.Fatalf("take on a dead connection: %v; want the connection's error, not retried", err)
	}
	var taken int
	for range maxConns() + 1 { // each failed take discards one dead connection
		if p, err := s.TakeContinuation(t.Context(), "n-1", "alpha", "digest-1"); err == nil && bytes.Equal(p, contPayload) {
			taken++
		} else if errors.Is(err, ErrContinuationGone) {
			break
		}
	}
	if taken != 1 {
		t.Errorf("the continuation was taken %d times after the failed take; want once", taken)
	}
}
