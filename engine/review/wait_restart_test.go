package review

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestWaitOutlastsServerRestart: the server restarts while a Store waits
// on an item; the waiter's reads fail while it is down, and its pooled
// connections are dead once it is back. The wait goes on (one log line
// says why it could not read), and a decision made from another Store
// after the restart is delivered to it.
func TestWaitOutlastsServerRestart(t *testing.T) {
	postgresOnly(t, "a SQLite file has no server to restart")
	c := ownCluster(t)
	core, logs := observer.New(zap.InfoLevel)
	s := openOn(t, c, zap.New(core))
	s.PollInterval = 10 * time.Millisecond // reads while the server is down, and on the dead connections after
	it := mustAdd(t, s, sampleItem("a"), time.Hour)
	got := waitFor(t, s, it.ID)

	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	cli := openOn(t, c, zap.NewNop())
	if _, err := cli.Approve(t.Context(), it.ID, "alice", ""); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.it.State != StateApproved {
		t.Fatalf("Wait across the restart = %s, %v; want approved", r.it.State, r.err)
	}
	if _, err := s.Finish(t.Context(), it.ID, StateDelivered, ""); err != nil {
		t.Fatalf("delivering the approved item: %v", err)
	}
	if n := logs.FilterMessageSnippet("while waiting on a review").Len(); n > 1 {
		t.Errorf("%d log lines for one outage; want at most one", n)
	}
}

// TestWaitExpiresWhileServerIsDown: the server stops for good while a
// Store waits on an item. The wait lasts until the item's deadline, not
// until the first failed read, and then ends with the expiry write's
// error; once the server is back, the item reads as expired.
func TestWaitExpiresWhileServerIsDown(t *testing.T) {
	postgresOnly(t, "a SQLite file has no server to stop")
	c := ownCluster(t)
	s := openOn(t, c, zap.NewNop())
	s.PollInterval = 10 * time.Millisecond
	const timeout = time.Second
	start := time.Now()
	it := mustAdd(t, s, sampleItem("a"), timeout)
	got := waitFor(t, s, it.ID)

	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if !errors.Is(r.err, ErrUnavailable) {
		t.Fatalf("Wait with the server down past the deadline = %s, %v; want ErrUnavailable", r.it.State, r.err)
	}
	if took := time.Since(start); took < timeout {
		t.Errorf("Wait gave up after %s, before the item's %s deadline", took, timeout)
	}
	if err := c.StartServer(); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, it.ID); got.State != StateExpired {
		t.Errorf("after the server is back the item is %s; want expired", got.State)
	}
}
