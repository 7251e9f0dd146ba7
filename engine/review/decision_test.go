package review

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRecordDecisionRoundTrip(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := time.Date(2026, 11, 29, 10, 0, 0, 123, time.UTC)
	want := Decision{ID: "dc-1", Server: "everything", Stage: StageRequest, Outcome: "escalate",
		Reasons: []Reason{{Code: "tools_offered", Message: "the request offers tools"}}, ReviewID: "rv-0123456789abcdef", CreatedAt: at}
	if err := s.RecordDecision(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Decision(t.Context(), "dc-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decision (-want +got):\n%s", diff)
	}
	if _, err := s.Decision(t.Context(), "dc-unknown"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Decision(unknown): %v, want ErrNotFound", err)
	}
	if err := s.RecordDecision(t.Context(), want); err == nil {
		t.Error("recording the same decision id twice succeeded")
	}
	if err := s.RecordDecision(t.Context(), Decision{Outcome: "pass"}); err == nil {
		t.Error("a decision without an id was recorded")
	}
}

// TestRecordDecisionOutlivesCancel: the upstream cancelling its request
// does not erase the record of what the firewall decided.
func TestRecordDecisionOutlivesCancel(t *testing.T) {
	s := openStore(t, stateDir(t))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.RecordDecision(ctx, Decision{ID: "dc-2", Server: "x", Stage: StageResult, Outcome: "blocker"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Decision(t.Context(), "dc-2")
	if err != nil || got.CreatedAt.IsZero() || got.Reasons == nil {
		t.Errorf("Decision: %+v, %v; want a creation time and [] reasons", got, err)
	}
}
