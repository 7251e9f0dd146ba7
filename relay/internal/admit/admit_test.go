package admit

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"go.uber.org/zap"
)

// TestAdmissionLimits: each limit refuses the claim that would pass it,
// naming its key, value and server (and the host session for a share), and
// counts the refusal; what was refused is not taken; release gives back
// exactly what a hold took, once.
func TestAdmissionLimits(t *testing.T) {
	lim := Limits{InFlight: 3, PendingReviews: 2, HeldBytes: 100, HostInFlight: 2, HostPendingReviews: 1, HostHeldBytes: 60}
	type step struct {
		host  string
		claim Claim
		want  string // the refusal's message, "" for none
	}
	for _, tc := range []struct {
		name  string
		steps []step
		limit string // the limit counted as refusing, once
	}{
		{"in flight", []step{{"a", Claim{InFlight: 2}, ""}, {"b", Claim{InFlight: 1}, ""},
			{"b", Claim{InFlight: 1}, "limits.max_in_flight (3) reached for server s"}}, "limits.max_in_flight"},
		{"pending reviews", []step{{"a", Claim{Reviews: 1}, ""}, {"b", Claim{Reviews: 1}, ""},
			{"c", Claim{Reviews: 1}, "limits.max_pending_reviews (2) reached for server s"}}, "limits.max_pending_reviews"},
		{"bytes", []step{{"a", Claim{Bytes: 60}, ""}, {"b", Claim{Bytes: 41}, "limits.max_held_bytes (100) reached for server s"}},
			"limits.max_held_bytes"},
		{"in flight per host", []step{{"a", Claim{InFlight: 2}, ""},
			{"a", Claim{InFlight: 1}, "limits.max_in_flight_per_host (2) reached for server s in this host session"}},
			"limits.max_in_flight_per_host"},
		{"reviews per host", []step{{"a", Claim{Reviews: 1}, ""},
			{"a", Claim{Reviews: 1}, "limits.max_pending_reviews_per_host (1) reached for server s in this host session"}},
			"limits.max_pending_reviews_per_host"},
		{"bytes per host", []step{{"a", Claim{Bytes: 61}, "limits.max_held_bytes_per_host (60) reached for server s in this host session"}},
			"limits.max_held_bytes_per_host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(lim, zap.NewNop(), nil)
			var holds []*Hold
			taken := Claim{}
			for i, st := range tc.steps {
				h, werr := a.Acquire("s", st.host, st.claim)
				switch {
				case st.want == "" && werr != nil:
					t.Fatalf("step %d: refused: %v", i, werr)
				case st.want != "" && (werr == nil || werr.Code != refusal.CodeInternal || werr.Message != st.want):
					t.Fatalf("step %d: %v, want -32603 %q", i, werr, st.want)
				case werr == nil:
					holds = append(holds, h)
					taken = taken.Add(st.claim)
				}
			}
			if got := a.Held("s"); got != taken {
				t.Errorf("held %+v, want %+v: a refusal took something", got, taken)
			}
			if n := a.Refusals("s", tc.limit); n != 1 {
				t.Errorf("%s refused %d times, want 1", tc.limit, n)
			}
			for _, h := range holds {
				h.Release()
				h.Release() // twice gives back nothing more
			}
			if got := a.Held("s"); got != (Claim{}) || len(a.shares) != 0 || a.holds != 0 {
				t.Errorf("after release: held %+v, %d shares, %d holds; want nothing", got, len(a.shares), a.holds)
			}
			if !a.Drain(time.Second) {
				t.Error("drain did not see every hold released")
			}
		})
	}
}

// TestAdmissionGrow: a hold that grows past a limit is refused and keeps
// what it held; released, it gives back all it grew to.
func TestAdmissionGrow(t *testing.T) {
	a := New(Limits{HeldBytes: 100, HostHeldBytes: 100}, zap.NewNop(), nil)
	h, werr := a.Acquire("s", "a", Claim{Reviews: 1})
	if werr != nil {
		t.Fatal(werr)
	}
	if werr := h.Grow(Claim{Bytes: 80}); werr != nil {
		t.Fatal(werr)
	}
	if werr := h.Grow(Claim{Bytes: 30}); werr == nil {
		t.Fatal("grew past limits.max_held_bytes")
	}
	if diff := cmp.Diff(Claim{Reviews: 1, Bytes: 80}, a.Held("s")); diff != "" {
		t.Errorf("held (-want +got):\n%s", diff)
	}
	h.Release()
	if got := a.Held("s"); got != (Claim{}) {
		t.Errorf("after release: %+v", got)
	}
	var none *Hold
	if werr := none.Grow(Claim{Bytes: 1 << 40}); werr != nil {
		t.Errorf("a nil hold refused: %v", werr)
	}
	none.Release()
}

// TestAdmissionDrainWaits: drain returns once the last hold is released,
// and reports a timeout while one is held.
func TestAdmissionDrainWaits(t *testing.T) {
	a := New(Limits{}, zap.NewNop(), nil)
	h, _ := a.Acquire("s", "a", Claim{InFlight: 1})
	if a.Drain(10 * time.Millisecond) {
		t.Fatal("drained with a hold held")
	}
	go h.Release()
	if !a.Drain(10 * time.Second) {
		t.Fatal("drain did not see the release")
	}
}
