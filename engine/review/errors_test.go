package review

import (
	"testing"
	"time"
)

func TestDecidedErrorSaysWhoAndWhen(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	later := at.Add(time.Minute)
	id := "rv-0123456789abcdef"
	for _, tc := range []struct {
		it   Item
		want string
	}{
		{Item{State: StateApproved, DecidedBy: "alice", DecidedAt: at},
			id + " was already approved by alice at 2026-11-29T10:00:00Z"},
		{Item{State: StateRejected, DecidedBy: "bob", DecidedAt: at.In(time.FixedZone("X", 3600))},
			id + " was already rejected by bob at 2026-11-29T10:00:00Z"},
		{Item{State: StateExpired, DecidedAt: at},
			id + " expired at 2026-11-29T10:00:00Z without a decision"},
		{Item{State: StateAbandoned, DecidedAt: at, Note: NoteOwnerGone},
			id + " was abandoned at 2026-11-29T10:00:00Z: the waiting process ended"},
		{Item{State: StateDelivered, DecidedBy: "alice", DecidedAt: at, FinishedAt: later},
			id + " was approved by alice at 2026-11-29T10:00:00Z and then delivered at 2026-11-29T10:01:00Z"},
		{Item{State: StateFailed, DecidedBy: "alice", DecidedAt: at, FinishedAt: later},
			id + " was approved by alice at 2026-11-29T10:00:00Z and then failed at 2026-11-29T10:01:00Z"},
	} {
		tc.it.ID = id
		if got := (&DecidedError{Item: tc.it}).Error(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.it.State, got, tc.want)
		}
	}
}
