package review

import (
	"errors"
	"testing"
	"time"
)

// dieAtCommit is a trigger function that ends its own backend: run by a
// deferred constraint trigger, it kills the connection while the server
// commits, before the commit is done.
const dieAtCommit = `CREATE FUNCTION die_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_terminate_backend(pg_backend_pid());
	PERFORM pg_sleep(10);
	RETURN NULL;
END $$;
`

// TestOneStatementWriteLostAtCommit: a write that is one statement (a
// continuation taken, a decision without a review) commits when the
// statement ends, so a connection lost once it was sent leaves its
// outcome unknown just as a lost COMMIT does: the error must say so, not
// that nothing was written. Here the server rolled the statement back,
// and the continuation is still there to take.
func TestOneStatementWriteLostAtCommit(t *testing.T) {
	postgresOnly(t, "a lost connection is a server's")
	dir := stateDir(t)
	s := openStore(t, dir)
	mustExec(t, rawDB(t, dir), dieAtCommit+`
CREATE CONSTRAINT TRIGGER die_at_commit AFTER DELETE ON continuations DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW WHEN (OLD.server = 'dies-at-commit') EXECUTE FUNCTION die_at_commit();
CREATE CONSTRAINT TRIGGER die_at_commit AFTER INSERT ON decisions DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW WHEN (NEW.server = 'dies-at-commit') EXECUTE FUNCTION die_at_commit()`)
	c := sampleContinuation("n-dies")
	c.Server = "dies-at-commit"
	if err := s.PutContinuation(t.Context(), c); err != nil {
		t.Fatal(err)
	}

	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"TakeContinuation", func() error {
			_, err := s.TakeContinuation(t.Context(), c.Nonce, c.Server, c.Call)
			return err
		}},
		{"Commit of a decision without usage or review", func() error {
			_, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-dies", Server: "dies-at-commit",
				Stage: StageRequest, Outcome: "pass", CreatedAt: time.Now()}})
			return err
		}},
	} {
		if err := w.write(); !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s whose connection died at commit: %v; want ErrOutcomeUnknown and ErrUnavailable", w.name, err)
		}
	}
	if got, err := s.HeldContinuations(t.Context(), []string{c.Nonce}); err != nil || !got[c.Nonce] {
		t.Errorf("after the lost take the continuation is held: %v, %v; want true (rolled back, not retried)", got[c.Nonce], err)
	}
}
