package review

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// wakeDeadline bounds how long a test lets a wake-up take before it calls
// it lost; the waiting Stores poll only hourly (openReplica), so a wake-up
// that comes at all came by notification.
const wakeDeadline = 30 * time.Second

// TestDecisionOnOneReplicaWakesAnother: a decision made through one
// replica (or the CLI) wakes the replica that waits on the item at once,
// by LISTEN/NOTIFY, and wakes whoever waits on Changed; neither polls.
func TestDecisionOnOneReplicaWakesAnother(t *testing.T) {
	postgresOnly(t, "replicas on one database wake each other by LISTEN/NOTIFY; SQLite processes poll")
	dir := stateDir(t)
	waiter, decider := openReplica(t, dir, DefaultLease), openReplica(t, dir, DefaultLease)
	cases := []struct {
		name   string
		decide func(id string) error
		want   State
	}{
		{"approve", func(id string) error { _, err := decider.Approve(t.Context(), id, "alice", ""); return err }, StateApproved},
		{"reject", func(id string) error { _, err := decider.Reject(t.Context(), id, "bob", "no"); return err }, StateRejected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := mustAdd(t, waiter, sampleItem("a"), time.Hour)
			got := waitFor(t, waiter, it.ID)
			changed := waiter.Changed()
			if err := tc.decide(it.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-time.After(wakeDeadline):
				t.Fatal("Changed was not closed after another replica's decision")
			}
			if r := <-got; r.err != nil || r.it.State != tc.want {
				t.Fatalf("Wait = %s, %v; want %s", r.it.State, r.err, tc.want)
			}
		})
	}
}

// TestListenerReconnectWakesWaiters: the server ends the listener's
// connection (a restart, a failover, an administrator); the listener
// connects again and, since a notification sent meanwhile is lost, wakes
// every waiter to read its item. A decision made while it was away still
// reaches the waiter without a poll.
func TestListenerReconnectWakesWaiters(t *testing.T) {
	postgresOnly(t, "the listener is PostgreSQL's")
	dir := stateDir(t)
	waiter, decider := openReplica(t, dir, DefaultLease), openReplica(t, dir, DefaultLease)
	it := mustAdd(t, waiter, sampleItem("a"), time.Hour)
	got := waitFor(t, waiter, it.ID)
	admin := rawDB(t, dir)
	if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN ` + reviewChannel + `'`); err != nil {
		t.Fatal(err)
	}
	if _, err := decider.Approve(t.Context(), it.ID, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.it.State != StateApproved {
		t.Fatalf("Wait = %s, %v; want approved", r.it.State, r.err)
	}
}

type waitResult struct {
	it  Item
	err error
}

// waitFor starts s.Wait(id) and returns once it has read the item pending
// and blocks; the result comes on the channel. Only one waitFor at a time
// per Store.
func waitFor(t testing.TB, s *Store, id string) <-chan waitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wakeDeadline)
	blocked := make(chan struct{})
	var once sync.Once
	s.blocked = func(string) { once.Do(func() { close(blocked) }) }
	done := make(chan waitResult, 1)
	go func() {
		defer cancel()
		it, err := s.Wait(ctx, id)
		done <- waitResult{it, err}
	}()
	select {
	case <-blocked:
	case r := <-done:
		t.Fatalf("Wait(%s) returned before it blocked: %s, %v", id, r.it.State, r.err)
	}
	return done
}

// BenchmarkApproveToWake is the time from Approve on one replica to Wait
// returning on another (two Stores on one database: two serve replicas),
// p50 and p99. On PostgreSQL the waiter is woken by notification; on
// SQLite (two processes on one file) it is the poll, DefaultPollInterval.
func BenchmarkApproveToWake(b *testing.B) {
	dir := b.TempDir() + "/state"
	waiter, decider := openReplica(b, dir, DefaultLease), openReplica(b, dir, DefaultLease)
	if !onPostgres() {
		waiter.PollInterval = DefaultPollInterval
	}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		it, err := waiter.Add(context.Background(), sampleItem("a"), time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		got := waitFor(b, waiter, it.ID)
		start := time.Now()
		if _, err := decider.Approve(context.Background(), it.ID, "alice", ""); err != nil {
			b.Fatal(err)
		}
		r := <-got
		lat = append(lat, time.Since(start))
		if r.err != nil || r.it.State != StateApproved {
			b.Fatalf("Wait = %s, %v", r.it.State, r.err)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(0, "ns/op")
}
