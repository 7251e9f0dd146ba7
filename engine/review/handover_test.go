package review

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// TestHandoverOnce: a handover's row is asked once per nonce, taken once
// by its holder (and by no other), answered once, and read once; an
// answer after its asker withdrew finds nothing, and a withdrawal returns
// an answer that came first.
func TestHandoverOnce(t *testing.T) {
	dir := stateDir(t)
	asker, holder := openStore(t, dir), openStore(t, dir)
	ctx := t.Context()
	h := Handover{Nonce: "n1", Holder: "replica-a", Server: "s", Call: "c", Expires: time.Now().Add(time.Minute), Payload: []byte("asked")}
	if err := asker.AskHandover(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := holder.AskHandover(ctx, h); !errors.Is(err, ErrHandoverClaimed) {
		t.Fatalf("a second ask of one nonce: %v, want ErrHandoverClaimed", err)
	}
	if hs, err := holder.TakeHandovers(ctx, "replica-b"); err != nil || len(hs) != 0 {
		t.Fatalf("another holder took %v, %v", hs, err)
	}
	hs, err := holder.TakeHandovers(ctx, "replica-a")
	if err != nil || len(hs) != 1 || hs[0].Nonce != "n1" || !bytes.Equal(hs[0].Payload, []byte("asked")) || hs[0].Server != "s" || hs[0].Call != "c" {
		t.Fatalf("take: %+v, %v", hs, err)
	}
	if again, err := holder.TakeHandovers(ctx, "replica-a"); err != nil || len(again) != 0 {
		t.Fatalf("taken twice: %+v, %v", again, err)
	}
	if _, ok, err := asker.HandoverAnswer(ctx, "n1"); ok || err != nil {
		t.Fatalf("answer before the holder wrote one: %v, %v", ok, err)
	}
	if err := holder.AnswerHandover(ctx, hs[0], []byte("answer")); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := asker.HandoverAnswer(ctx, "n1"); !ok || err != nil || string(got) != "answer" {
		t.Fatalf("read the answer: %q, %v, %v", got, ok, err)
	}
	if _, ok, _ := asker.HandoverAnswer(ctx, "n1"); ok {
		t.Fatal("an answer read twice")
	}

	h.Nonce = "n2"
	if err := asker.AskHandover(ctx, h); err != nil {
		t.Fatal(err)
	}
	if hs, err = holder.TakeHandovers(ctx, "replica-a"); err != nil || len(hs) != 1 {
		t.Fatalf("take: %+v, %v", hs, err)
	}
	if _, ok, err := asker.WithdrawHandover(ctx, "n2"); ok || err != nil {
		t.Fatalf("withdraw an unanswered handover: %v, %v", ok, err)
	}
	if err := holder.AnswerHandover(ctx, hs[0], []byte("late")); !errors.Is(err, ErrHandoverGone) {
		t.Fatalf("answer after the asker withdrew: %v, want ErrHandoverGone", err)
	}

	h.Nonce, h.Expires = "n3", time.Now().Add(-time.Second)
	if err := asker.AskHandover(ctx, h); err != nil {
		t.Fatal(err)
	}
	if hs, err := holder.TakeHandovers(ctx, "replica-a"); err != nil || len(hs) != 0 {
		t.Fatalf("a handover past its deadline was taken: %+v, %v", hs, err)
	}
}

// TestHandoverWakes: on PostgreSQL, a handover asked of a holder wakes
// it, and its answer wakes the asker, through the listener, though
// neither polls.
func TestHandoverWakes(t *testing.T) {
	postgresOnly(t, "notifications")
	dir := stateDir(t)
	asker, holder := openReplica(t, dir, DefaultLease), openReplica(t, dir, DefaultLease)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	asked, stopAsked := holder.HandoverWake("ask:replica-a")
	defer stopAsked()
	answered, stopAnswered := asker.HandoverWake("answer:n1")
	defer stopAnswered()
	h := Handover{Nonce: "n1", Holder: "replica-a", Server: "s", Call: "c", Expires: time.Now().Add(time.Minute), Payload: []byte("asked")}
	if err := asker.AskHandover(ctx, h); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the holder was not woken by the ask")
	}
	hs, err := holder.TakeHandovers(ctx, "replica-a")
	if err != nil || len(hs) != 1 {
		t.Fatalf("take: %+v, %v", hs, err)
	}
	if err := holder.AnswerHandover(ctx, hs[0], []byte("answer")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-answered:
	case <-ctx.Done():
		t.Fatal("the asker was not woken by the answer")
	}
}

// TestHolderPresence: on PostgreSQL a Store that is present is alive to
// the others; once its connections are gone, as a killed process's are,
// it is gone at once, though its lease has not run out; a lease that ran
// out or was released is gone too, and so is an owner that is no lease.
func TestHolderPresence(t *testing.T) {
	postgresOnly(t, "leases and presence locks")
	dir := stateDir(t)
	other, holder := openReplica(t, dir, time.Hour), openReplica(t, dir, time.Hour)
	ctx := t.Context()
	holder.Present(ctx)
	if alive, err := other.HolderAlive(ctx, holder.Owner()); !alive || err != nil {
		t.Fatalf("a present holder: alive %v, %v", alive, err)
	}
	holder.bgStop() // its listener's connection closes, as at a kill; the lease stays
	holder.bg.Wait()
	// The server ends the session's backend, and its locks, just after the
	// connection closes.
	start := time.Now()
	for {
		alive, err := other.HolderAlive(ctx, holder.Owner())
		if err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("a holder whose connections are gone is still alive 10s later; want gone")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("gone %v after its connection closed", time.Since(start))
	if alive, err := other.HolderAlive(ctx, "12345"); alive || err != nil {
		t.Fatalf("an owner that is no lease: alive %v, %v; want gone", alive, err)
	}
}

// TestPruneSweepsHandovers: a handover's row left past its deadline (its
// asker killed while it waited, and no other handover asked since to
// sweep it) is deleted by Prune, as expired continuations are, so the
// sealed answers it holds do not stay in the store for good.
func TestPruneSweepsHandovers(t *testing.T) {
	s := openStore(t, stateDir(t))
	ctx := t.Context()
	h := Handover{Nonce: "n1", Holder: "replica-a", Server: "s", Call: "c", Expires: time.Now().Add(-time.Second), Payload: []byte("asked")}
	if err := s.AskHandover(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM handovers").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d handover rows past their deadline after Prune, want 0", n)
	}
}

// TestHandoverAnswerBoundToItsAsk: a holder's answer, and its look at
// whether the row is still taken, are for the ask it took, not for its
// nonce: once that asker withdrew, a replay of the same state asked and
// taken since is not answered with the first call's result (which its
// asker gave up on) and does not keep the first call running.
func TestHandoverAnswerBoundToItsAsk(t *testing.T) {
	dir := stateDir(t)
	asker, holder := openStore(t, dir), openStore(t, dir)
	ctx := t.Context()
	h := Handover{Nonce: "n1", Holder: "replica-a", Server: "s", Call: "c", Expires: time.Now().Add(time.Minute), Payload: []byte("asked")}
	if err := asker.AskHandover(ctx, h); err != nil {
		t.Fatal(err)
	}
	first, err := holder.TakeHandovers(ctx, "replica-a")
	if err != nil || len(first) != 1 {
		t.Fatalf("take: %+v, %v", first, err)
	}
	if _, _, err := asker.WithdrawHandover(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	h.Expires = h.Expires.Add(time.Millisecond) // the replay's own ask
	if err := asker.AskHandover(ctx, h); err != nil {
		t.Fatal(err)
	}
	if replay, err := holder.TakeHandovers(ctx, "replica-a"); err != nil || len(replay) != 1 {
		t.Fatalf("take the replay: %+v, %v", replay, err)
	}
	if taken, err := holder.HandoverTaken(ctx, first[0]); taken || err != nil {
		t.Errorf("the withdrawn ask still taken: %v, %v", taken, err)
	}
	if err := holder.AnswerHandover(ctx, first[0], []byte("result")); !errors.Is(err, ErrHandoverGone) {
		t.Errorf("the withdrawn ask's answer: %v, want ErrHandoverGone", err)
	}
}
