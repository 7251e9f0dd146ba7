package review

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// steppedClock is a wall clock a test can step, as NTP, a VM resume or
// `date -s` would: time.Now (the bubble's fake time) plus an offset. The
// monotonic clock, which timers and time.Since use, is not stepped.
type steppedClock struct{ offset atomic.Int64 }

func (c *steppedClock) now() time.Time       { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *steppedClock) step(d time.Duration) { c.offset.Add(int64(d)) }

// TestWallClockSteps: a review's deadline is wall-clock time in the store
// (every process reads it the same), and the waiting process also keeps it
// on the monotonic clock. A step forward past the deadline expires the
// review at the next poll; a step back never extends it. An operator in
// another process, whose wall clock stepped with this one's, is refused
// once it expired, and an approval in time still counts.
func TestWallClockSteps(t *testing.T) {
	const timeout = 10 * time.Minute
	const off = 500 * time.Millisecond // between two polls, one a second
	cases := []struct {
		name      string
		stepAt    time.Duration // real (monotonic) time after opening; <0: before Wait starts
		step      time.Duration
		approveAt time.Duration // 0: nobody approves
		want      State
		wantAt    time.Duration // real time after opening when Wait returns
		wantWarn  bool          // the "clock was set back" warning
	}{
		{name: "forward past the deadline expires at the next poll", stepAt: time.Minute + off, step: time.Hour,
			want: StateExpired, wantAt: time.Minute + time.Second},
		{name: "forward within the deadline brings expiry forward", stepAt: time.Minute + off, step: 2 * time.Minute,
			want: StateExpired, wantAt: timeout - 2*time.Minute},
		{name: "back an hour does not extend the review", stepAt: time.Minute + off, step: -time.Hour,
			want: StateExpired, wantAt: timeout, wantWarn: true},
		{name: "back an hour before the first wait", stepAt: -1, step: -time.Hour,
			want: StateExpired, wantAt: timeout, wantWarn: true},
		{name: "back an hour: an approval in time still counts", stepAt: time.Minute + off, step: -time.Hour,
			approveAt: 5*time.Minute + off, want: StateApproved, wantAt: 5*time.Minute + time.Second},
		{name: "back an hour: an approval after the real deadline is refused", stepAt: time.Minute + off, step: -time.Hour,
			approveAt: timeout + time.Minute, want: StateExpired, wantAt: timeout, wantWarn: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := stateDir(t)
			synctest.Test(t, func(t *testing.T) {
				clock := &steppedClock{}
				serve, cli := openStore(t, dir), openStore(t, dir)
				serve.PollInterval = time.Second
				core, logs := observer.New(zap.WarnLevel)
				serve.log = zap.New(core)
				serve.clock, cli.clock = clock.now, clock.now
				it := mustAdd(t, serve, sampleItem("everything"), timeout)
				opened := time.Now()

				type result struct {
					it  Item
					err error
					at  time.Duration
				}
				if tc.stepAt < 0 {
					clock.step(tc.step)
				}
				done := make(chan result, 1)
				go func() {
					got, err := serve.Wait(t.Context(), it.ID)
					done <- result{got, err, time.Since(opened)}
				}()
				if tc.stepAt >= 0 {
					go func() {
						time.Sleep(tc.stepAt)
						clock.step(tc.step)
					}()
				}
				var approveErr error
				approved := make(chan struct{})
				go func() {
					defer close(approved)
					if tc.approveAt > 0 {
						time.Sleep(tc.approveAt)
						_, approveErr = cli.Approve(t.Context(), it.ID, "alice", "")
					}
				}()

				r := <-done
				<-approved
				if r.err != nil || r.it.State != tc.want {
					t.Fatalf("Wait: %s, %v; want %s", r.it.State, r.err, tc.want)
				}
				if r.at != tc.wantAt {
					t.Errorf("Wait returned %v after opening, want %v", r.at, tc.wantAt)
				}
				var decided *DecidedError
				switch {
				case tc.approveAt > 0 && tc.want == StateApproved && approveErr != nil:
					t.Errorf("approval in time refused: %v", approveErr)
				case tc.approveAt > 0 && tc.want != StateApproved && (!errors.As(approveErr, &decided) || decided.Item.State != StateExpired):
					t.Errorf("approval after the real deadline: %v; want refused as expired", approveErr)
				}
				if tc.want == StateExpired {
					if _, err := cli.Approve(t.Context(), it.ID, "bob", ""); !errors.As(err, &decided) || decided.Item.State != StateExpired {
						t.Errorf("approving the expired review: %v; want refused as expired", err)
					}
				}
				if warned := logs.FilterMessageSnippet("clock was set back").Len() > 0; warned != tc.wantWarn {
					t.Errorf("set-back warning logged = %v, want %v", warned, tc.wantWarn)
				}
				if got := mustGet(t, cli, it.ID); got.State != tc.want {
					t.Errorf("stored state %s, want %s", got.State, tc.want)
				}
			})
		})
	}
}
