package review

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var settleWindows = map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}

// reserve commits a request-stage decision of server at at reserving
// prompt plus maxTokens.
func reserve(t *testing.T, s *Store, id, server string, at time.Time, prompt, maxTokens int64) {
	t.Helper()
	commitAt(t, s, id, server, at, Usage{Requests: 1, RequestedTokens: maxTokens, Tokens: prompt + maxTokens})
}

// commitSettling commits a decision of server that settles, now.
func commitSettling(t *testing.T, s *Store, id, server, stage string, st Settlement) {
	t.Helper()
	_, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: id, Server: server, Stage: stage, Outcome: "pass"}, Settles: &st})
	if err != nil {
		t.Fatalf("Commit(%s): %v", id, err)
	}
}

func usageNow(t *testing.T, s *Store, server string) map[string]Usage {
	t.Helper()
	got, err := s.UsageIn(t.Context(), server, settleWindows, now())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSettlementStaysWithTheRequest: a completion that comes back after
// its request left the hour settles the request's charge where the
// request is, at its arrival: the hour it lands in is charged nothing
// (a release there would spend the budget twice), the day holds the
// prompt and what was returned, once. A completion settled a minute
// after its request is the same in every window that holds both.
func TestSettlementStaysWithTheRequest(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := now()
	reserve(t, s, "dc-late", "a", at.Add(-61*time.Minute), 300, 1000)
	reserve(t, s, "dc-soon", "a", at.Add(-30*time.Second), 20, 500)
	commitSettling(t, s, "dc-late-result", "a", StageResult, Settlement{Reservation: "dc-late", Completed: true, Returned: 40})
	commitSettling(t, s, "dc-soon-result", "a", StageResult, Settlement{Reservation: "dc-soon", Completed: true, Returned: 7})

	want := map[string]Usage{
		"minute": {Requests: 1, RequestedTokens: 500, ReturnedTokens: 7, Tokens: 27},
		"hour":   {Requests: 1, RequestedTokens: 500, ReturnedTokens: 7, Tokens: 27},
		"day":    {Requests: 2, RequestedTokens: 1500, ReturnedTokens: 47, Tokens: 367},
	}
	if diff := cmp.Diff(want, usageNow(t, s, "a")); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestSettlementOnce: a charge is settled once. A second completion for
// the same reservation, one naming another server's, a request-stage
// reservation that does not exist, and a completion with no reservation
// at all are each charged what they returned, on their own decision: a
// completion is never free, and never releases what it did not reserve.
func TestSettlementOnce(t *testing.T) {
	s := openStore(t, stateDir(t))
	reserve(t, s, "dc-r", "a", now(), 10, 100)
	reserve(t, s, "dc-b", "b", now(), 10, 100)
	commitSettling(t, s, "dc-1", "a", StageResult, Settlement{Reservation: "dc-r", Completed: true, Returned: 5})
	commitSettling(t, s, "dc-2", "a", StageResult, Settlement{Reservation: "dc-r", Completed: true, Returned: 6})
	commitSettling(t, s, "dc-3", "a", StageResult, Settlement{Reservation: "dc-b", Completed: true, Returned: 7})
	commitSettling(t, s, "dc-4", "a", StageResult, Settlement{Reservation: "dc-none", Completed: true, Returned: 8})
	commitSettling(t, s, "dc-5", "a", StageResult, Settlement{Completed: true, Returned: 9})
	want := Usage{Requests: 1, RequestedTokens: 100, ReturnedTokens: 5 + 6 + 7 + 8 + 9, Tokens: 10 + 5 + 6 + 7 + 8 + 9}
	if got := usageNow(t, s, "a")["hour"]; got != want {
		t.Errorf("a's hour %+v, want %+v", got, want)
	}
	if got := usageNow(t, s, "b")["hour"]; got.Tokens != 110 {
		t.Errorf("b's hour %+v: another server's completion changed its reservation", got)
	}
}

// TestReserveAgain: an approved edit reserves its request again, in
// place, for what the edited request may cost; a settled charge is not
// reserved again.
func TestReserveAgain(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := now().Add(-2 * time.Minute)
	reserve(t, s, "dc-r", "a", at, 10, 1)
	commitSettling(t, s, "dc-again", "a", StageRequest, Settlement{Reservation: "dc-r", Reserve: Usage{RequestedTokens: 900, Tokens: 950}})
	if got := usageNow(t, s, "a"); got["minute"].Tokens != 0 || got["hour"] != (Usage{Requests: 1, RequestedTokens: 900, Tokens: 950}) {
		t.Fatalf("after the edit: %+v, want 950 reserved two minutes ago", got)
	}
	commitSettling(t, s, "dc-result", "a", StageResult, Settlement{Reservation: "dc-r", Completed: true, Returned: 30})
	commitSettling(t, s, "dc-late", "a", StageRequest, Settlement{Reservation: "dc-r", Reserve: Usage{RequestedTokens: 5, Tokens: 5}})
	if got := usageNow(t, s, "a")["hour"]; got != (Usage{Requests: 1, RequestedTokens: 900, ReturnedTokens: 30, Tokens: 50 + 30}) {
		t.Errorf("after the completion: %+v, want the edited prompt's 50 and 30 returned", got)
	}
}

// TestReleaseOnClose: a request-stage review that closes without its
// request reaching the host (rejected, expired, abandoned, failed after
// approval) gives back what its decision reserved; the request still
// counts. One delivered keeps its reservation, and a result-stage review
// releases nothing: the completion was made.
func TestReleaseOnClose(t *testing.T) {
	cases := []struct {
		name  string
		stage string
		close func(t *testing.T, s *Store, id string)
		want  int64
	}{
		{"rejected", StageRequest, func(t *testing.T, s *Store, id string) { mustReject(t, s, id) }, 0},
		{"failed after approval", StageRequest, func(t *testing.T, s *Store, id string) {
			mustApprove(t, s, id)
			mustFinish(t, s, id, StateFailed)
		}, 0},
		{"delivered", StageRequest, func(t *testing.T, s *Store, id string) {
			mustApprove(t, s, id)
			mustFinish(t, s, id, StateDelivered)
		}, 110},
		{"a result-stage review rejected", StageResult, func(t *testing.T, s *Store, id string) { mustReject(t, s, id) }, 110},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, stateDir(t))
			it := sampleItem("a")
			it.Stage = tc.stage
			if tc.stage == StageResult {
				it.Result = []byte(`{"role":"assistant","model":"m","content":{"type":"text","text":"ok"}}`)
			}
			opened, err := s.Commit(t.Context(), Entry{
				Decision: Decision{ID: "dc-held", Server: "a", Stage: tc.stage, Outcome: "escalate"},
				Usage:    Usage{Requests: 1, RequestedTokens: 100, Tokens: 110}, Review: &it, ReviewTimeout: time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			tc.close(t, s, opened.ID)
			if got := usageNow(t, s, "a")["hour"]; got.Tokens != tc.want || got.Requests != 1 {
				t.Errorf("hour %+v, want 1 request and %d tokens", got, tc.want)
			}
		})
	}
}

// TestReleaseOnExpiry: a review that expires gives its reservation back,
// whoever notices the deadline first.
func TestReleaseOnExpiry(t *testing.T) {
	inBubble(t, func(t *testing.T, s *Store) {
		it := sampleItem("a")
		opened, err := s.Commit(t.Context(), Entry{
			Decision: Decision{ID: "dc-held", Server: "a", Stage: StageRequest, Outcome: "escalate"},
			Usage:    Usage{Requests: 1, RequestedTokens: 100, Tokens: 110}, Review: &it, ReviewTimeout: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Wait(t.Context(), opened.ID); err != nil || got.State != StateExpired {
			t.Fatalf("Wait: %v %v, want expired", got.State, err)
		}
		if got := usageNow(t, s, "a")["hour"]; got.Tokens != 0 || got.Requests != 1 {
			t.Errorf("hour %+v, want the request counted and nothing reserved", got)
		}
	})
}

// TestSettledChargeIsFinal: the database itself refuses to change a
// settled charge, or a decision's server, stage or time, whatever SQL
// asks; the buckets could not follow such a change.
func TestSettledChargeIsFinal(t *testing.T) {
	s := openStore(t, stateDir(t))
	reserve(t, s, "dc-r", "a", now(), 10, 100)
	reserve(t, s, "dc-open", "a", now(), 10, 100)
	commitSettling(t, s, "dc-1", "a", StageResult, Settlement{Reservation: "dc-r", Completed: true, Returned: 5})
	for _, stmt := range []string{
		`UPDATE decisions SET tokens = 0 WHERE id = 'dc-r'`,
		`UPDATE decisions SET settled_by = '' WHERE id = 'dc-r'`,
		`UPDATE decisions SET created_at = 0 WHERE id = 'dc-open'`,
		`UPDATE decisions SET server = 'b' WHERE id = 'dc-open'`,
		`UPDATE decisions SET requests = 0 WHERE id = 'dc-open'`,
	} {
		_, err := s.db.ExecContext(t.Context(), stmt)
		if err == nil || !strings.Contains(err.Error(), "only an unsettled charge") {
			t.Errorf("%s: %v, want the database to refuse", stmt, err)
		}
	}
}

// TestChargeForSeesUsageWithoutItsRequest: a later decision on a request
// decides on its server's usage without that request's own charge, in
// the windows that hold it, and as the usage stands in the same turn.
func TestChargeForSeesUsageWithoutItsRequest(t *testing.T) {
	s := openStore(t, stateDir(t))
	r, err := s.UsageReader(t.Context(), settleWindows)
	if err != nil {
		t.Fatal(err)
	}
	reserve(t, s, "dc-other", "a", now().Add(-90*time.Second), 0, 200)
	reserve(t, s, "dc-mine", "a", now().Add(-2*time.Minute), 50, 300)
	var seen map[string]Usage
	_, err = r.ChargeFor(t.Context(), "a", "dc-mine", func(u map[string]Usage) (Entry, error) {
		seen = u
		return Entry{Decision: Decision{ID: "dc-again", Server: "a", Stage: StageRequest, Outcome: "pass"},
			Settles: &Settlement{Reservation: "dc-mine", Reserve: Usage{RequestedTokens: 300, Tokens: 400}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Usage{"minute": {}, "hour": {Requests: 1, RequestedTokens: 200, Tokens: 200}, "day": {Requests: 1, RequestedTokens: 200, Tokens: 200}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("seen (-want +got):\n%s", diff)
	}
	if got := usageNow(t, s, "a")["hour"]; got.Tokens != 600 {
		t.Errorf("hour %+v, want 200 and the 400 reserved again", got)
	}
}

func mustReject(t *testing.T, s *Store, id string) {
	t.Helper()
	if _, err := s.Reject(t.Context(), id, "alice", "no"); err != nil {
		t.Fatal(err)
	}
}

func mustApprove(t *testing.T, s *Store, id string) {
	t.Helper()
	if _, err := s.Approve(t.Context(), id, "alice", ""); err != nil {
		t.Fatal(err)
	}
}

func mustFinish(t *testing.T, s *Store, id string, st State) {
	t.Helper()
	if _, err := s.Finish(t.Context(), id, st, "test"); err != nil {
		t.Fatal(err)
	}
}

// TestSettlementsKeepTheSums: whatever changes the charges on their
// first decisions (settlements, reservations made again, settlements that
// find nothing to settle), every window read at every edge still sums to
// what the decisions rows hold: the buckets follow each change at the
// row's own time.
func TestSettlementsKeepTheSums(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(11, 11))
	var ids []string
	for n, created := range commitTimes(rng, at, usageWindows) {
		id := fmt.Sprintf("dc-%d", n)
		server := []string{"a", "b"}[n%2]
		m := rng.Int64N(2000)
		commitAt(t, s, id, server, created, Usage{Requests: 1, RequestedTokens: m, Tokens: m + rng.Int64N(500)})
		ids = append(ids, id)
	}
	for n, id := range ids {
		server := []string{"a", "b"}[n%2]
		st := Settlement{Reservation: id, Completed: true, Returned: rng.Int64N(2000)}
		switch rng.IntN(4) {
		case 0:
			st = Settlement{Reservation: id, Reserve: Usage{RequestedTokens: rng.Int64N(2000), Tokens: rng.Int64N(3000)}}
		case 1:
			st.Reservation = "dc-none"
		}
		_, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: id + "-later", Server: server, Stage: StageResult, Outcome: "pass",
			CreatedAt: at.Add(time.Duration(rng.Int64N(int64(2 * time.Hour))))}, Settles: &st})
		if err != nil {
			t.Fatal(err)
		}
	}
	wantSums(t, s, at)
}

// TestSettlementAfterUpgrade: a request reserved by a binary before
// settlements (its reservation its maxTokens alone) is settled by this
// one to what its completion returned.
func TestSettlementAfterUpgrade(t *testing.T) {
	dir := stateDir(t)
	old := openAtVersion(t, dir, 6) // before migration 7, which keeps settlements
	_, err := old.ExecContext(t.Context(), `INSERT INTO decisions (id, server, stage, outcome, reasons,
		review_id, created_at, requests, requested_tokens, returned_tokens, tokens)
		VALUES ('dc-old', 'a', 'request', 'pass', '[]', '', ?, 1, 500, 0, 500)`, now().Add(-time.Minute).UnixNano())
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	commitSettling(t, s, "dc-result", "a", StageResult, Settlement{Reservation: "dc-old", Completed: true, Returned: 42})
	if got := usageNow(t, s, "a")["hour"]; got != (Usage{Requests: 1, RequestedTokens: 500, ReturnedTokens: 42, Tokens: 42}) {
		t.Errorf("hour %+v, want the 42 returned", got)
	}
}
