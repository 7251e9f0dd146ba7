package review

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// quiet stops a PostgreSQL Store's background work: its heartbeat, and
// its listener before it starts. A goroutine blocked reading the network
// keeps a synctest bubble's clock from ever advancing, and a heartbeat's
// sweep would close items on the bubble's fake time at moments a test does
// not choose. The lease is renewed once for a day instead, so other Stores
// of the test never take this one for dead.
func quiet(t testing.TB, s *Store) {
	t.Helper()
	if s.heartbeatStop == nil {
		return
	}
	s.heartbeatStop()
	s.listenOnce.Do(func() {})
	s.bg.Wait()
	s.readyOnce.Do(func() { close(s.listenReady) })
	s.lease = 24 * time.Hour
	if err := s.renewLease(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// openReplica opens a Store on dir as serve does: on PostgreSQL with its
// listener and its heartbeat, holding a lease of the given length. It
// polls only every hour, so what it sees sooner came by notification.
func openReplica(t testing.TB, dir string, lease time.Duration) *Store {
	t.Helper()
	var s *Store
	var err error
	log := zap.NewNop() // a benchmark's output is its figures
	if tt, ok := t.(*testing.T); ok {
		log = zaptest.NewLogger(tt)
	}
	if onPostgres() {
		u, uerr := schemaURL(testPostgres, dir)
		if uerr != nil {
			t.Fatal(uerr)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err = OpenURL(ctx, u, log, WithLease(lease))
	} else {
		s, err = Open(dir, log)
	}
	if err != nil {
		t.Fatalf("open replica on %s: %v", dir, err)
	}
	s.PollInterval = time.Hour
	t.Cleanup(func() { s.Close() })
	return s
}

// postgresOnly skips a test of replicas on one PostgreSQL database in the
// SQLite pass.
func postgresOnly(t testing.TB, why string) {
	t.Helper()
	if !onPostgres() {
		t.Skip("PostgreSQL only: " + why)
	}
}
