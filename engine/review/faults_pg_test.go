package review

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpx-fw/mcpx-fw/engine/review/pgtest"
)

// ownCluster starts a PostgreSQL cluster for one test, which it may stop,
// restart and reconfigure without disturbing the suite's shared one.
func ownCluster(t *testing.T) *pgtest.Cluster {
	t.Helper()
	return pgtest.New(t)
}

// withPassword is u with a password: the test clusters trust every local
// connection, so the password is never checked, only carried.
func withPassword(t *testing.T, raw, password string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// TestServerRestartFailsClosedThenRecovers: with the server stopped, every
// write fails at once with ErrUnavailable, logged with the backend and
// what failed and never the password; once the server is back, the same
// Store works again, and its listener wakes a waiter for a decision made
// by another process, with no reopen.
func TestServerRestartFailsClosedThenRecovers(t *testing.T) {
	postgresOnly(t, "a SQLite file has no server to lose")
	c := ownCluster(t)
	const password = "pw-never-shown"
	core, logs := observer.New(zap.InfoLevel)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := OpenURL(ctx, withPassword(t, c.URL("postgres"), password), zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.PollInterval = time.Hour
	it := mustAdd(t, s, sampleItem("a"), time.Hour)
	got := waitFor(t, s, it.ID)

	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	escalation := sampleItem("a")
	for _, e := range []Entry{
		{Decision: Decision{ID: "dc-down-1", Server: "a", Stage: StageRequest, Outcome: "pass"}, Usage: Usage{Requests: 1}},
		{Decision: Decision{ID: "dc-down-2", Server: "a", Stage: StageRequest, Outcome: "escalate"}, Review: &escalation, ReviewTimeout: time.Hour},
	} {
		start := time.Now()
		_, err := s.Commit(t.Context(), e)
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Commit %s with the server stopped: %v; want ErrUnavailable", e.Decision.ID, err)
		}
		if took := time.Since(start); took > 2*DefaultConnectTimeout {
			t.Errorf("Commit %s took %s to fail; want at most the connect timeout", e.Decision.ID, took)
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	if logs.FilterMessage("review store unavailable").FilterField(zap.String("backend", "postgres")).Len() == 0 {
		t.Error("no log line names the unavailable backend")
	}
	for _, e := range logs.All() {
		for _, f := range e.Context {
			if strings.Contains(f.String, password) || (f.Interface != nil && strings.Contains(errString(f.Interface), password)) {
				t.Errorf("log line %q shows the password in %s", e.Message, f.Key)
			}
		}
	}

	if err := c.StartServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-back", Server: "a", Stage: StageRequest, Outcome: "pass"}, Usage: Usage{Requests: 1}}); err != nil {
		t.Fatalf("Commit after the server is back: %v", err)
	}
	cli, err := OpenURL(ctx, c.URL("postgres"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Approve(t.Context(), it.ID, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.it.State != StateApproved {
		t.Fatalf("Wait across the restart = %s, %v; want approved", r.it.State, r.err)
	}
	if _, err := s.Decision(t.Context(), "dc-down-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a decision refused while the server was down was stored: %v", err)
	}
}

func errString(v any) string {
	if err, ok := v.(error); ok {
		return err.Error()
	}
	return ""
}

// TestCommitLostMidwayIsNotRetried: the connection dies while the server
// runs a decision's COMMIT. The decision fails closed as outcome unknown
// and is not run again; here the server rolled it back, so the item is
// still pending, the next decision is the only one, and it is delivered
// once.
func TestCommitLostMidwayIsNotRetried(t *testing.T) {
	postgresOnly(t, "a lost connection is a server's")
	dir := stateDir(t)
	s := openStore(t, dir)
	it := mustAdd(t, s, sampleItem("a"), time.Hour)
	// A deferred trigger runs at COMMIT; this one ends its own backend there.
	mustExec(t, rawDB(t, dir), dieAtCommit+`
CREATE CONSTRAINT TRIGGER die_at_commit AFTER INSERT ON history DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW WHEN (NEW.actor = 'dies-at-commit') EXECUTE FUNCTION die_at_commit()`)

	_, err := s.Approve(t.Context(), it.ID, "dies-at-commit", "")
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Approve whose COMMIT lost its connection: %v; want ErrOutcomeUnknown and ErrUnavailable", err)
	}
	if got := mustGet(t, s, it.ID); got.State != StatePending {
		t.Fatalf("after the lost COMMIT the item is %s by %q; want pending (rolled back, not retried)", got.State, got.DecidedBy)
	}
	if _, err := s.Approve(t.Context(), it.ID, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(t.Context(), it.ID, StateDelivered, ""); err != nil {
		t.Fatal(err)
	}
	var decided *DecidedError
	if _, err := s.Finish(t.Context(), it.ID, StateDelivered, ""); !errors.As(err, &decided) {
		t.Errorf("second Finish: %v; want a DecidedError", err)
	}
	if hist, err := s.History(t.Context(), it.ID); err != nil || len(hist) != 3 || hist[1].Actor != "alice" {
		t.Errorf("history %+v, %v; want opened, approved by alice, delivered", hist, err)
	}
}

// TestOpenNamesWhatIsWrong: what serve's start and `mcpx-fw check` print
// when the store cannot be used says why, in an operator's words, and
// never the password.
func TestOpenNamesWhatIsWrong(t *testing.T) {
	postgresOnly(t, "a SQLite file has no server to reach")
	const password = "pw-never-shown"
	cases := []struct {
		name        string
		url         func(t *testing.T) string
		want        string
		unavailable bool
	}{
		{"no server on the socket", func(t *testing.T) string {
			return withPassword(t, "postgres://postgres@/postgres?host="+url.QueryEscape(filepath.Join(t.TempDir(), "nothing")), password)
		}, "no server socket", true},
		{"connection refused", func(t *testing.T) string {
			return "postgres://postgres:" + password + "@127.0.0.1:1/postgres?sslmode=disable"
		}, "connection refused", true},
		{"authentication failed", func(t *testing.T) string {
			c := ownCluster(t)
			db := rawURLDB(t, c.URL("postgres"))
			mustExec(t, db, "ALTER ROLE postgres PASSWORD 'the-right-one'")
			hba := filepath.Join(c.DataDir(), "pg_hba.conf")
			if err := os.WriteFile(hba, []byte("local all all scram-sha-256\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(c.StopServer(), c.StartServer()); err != nil {
				t.Fatal(err)
			}
			return withPassword(t, c.URL("postgres"), password)
		}, "authentication failed", false},
		{"schema too old for a user that may not migrate it", func(t *testing.T) string {
			dir := stateDir(t)
			old := openAtVersion(t, dir, len(pgMigrations)-1)
			var schema string
			if err := old.QueryRow("SELECT current_schema()").Scan(&schema); err != nil {
				t.Fatal(err)
			}
			role := "r_" + schema // roles belong to the cluster, schemas to a test
			mustExec(t, old, "CREATE ROLE "+role+" LOGIN")
			mustExec(t, old, "GRANT USAGE ON SCHEMA "+schema+" TO "+role)
			mustExec(t, old, "GRANT SELECT ON ALL TABLES IN SCHEMA "+schema+" TO "+role)
			u, err := schemaURL(testPostgres, dir)
			if err != nil {
				t.Fatal(err)
			}
			pu, _ := url.Parse(u)
			pu.User = url.UserPassword(role, password)
			return pu.String()
		}, "older than this mcpx-fw's", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			s, err := OpenURL(ctx, tc.url(t), zap.NewNop())
			if err == nil {
				s.Close()
				t.Fatal("OpenURL succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrUnavailable) != tc.unavailable {
				t.Errorf("OpenURL: %v\nwant it to say %q, ErrUnavailable %v", err, tc.want, tc.unavailable)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// rawURLDB is a connection pool on a cluster's URL, closed with the test.
func rawURLDB(t *testing.T, u string) *db {
	t.Helper()
	sqlDB, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB.Close() })
	return &db{DB: sqlDB, binder: newBinder(dialectPostgres)}
}

// TestOpenGivesUpOnASilentServer: a server that accepts the connection and
// never answers (a hung host, a black-holing proxy) fails OpenURL within
// DefaultConnectTimeout, as unavailable and timed out, when store.url sets
// no connect_timeout, instead of hanging serve's start or a write.
func TestOpenGivesUpOnASilentServer(t *testing.T) {
	postgresOnly(t, "store.url's connection")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 4*DefaultConnectTimeout)
	defer cancel()
	start := time.Now()
	s, err := OpenURL(ctx, "postgres://fw@"+ln.Addr().String()+"/fw?sslmode=disable", zap.NewNop())
	if err == nil {
		s.Close()
		t.Fatal("OpenURL succeeded")
	}
	if took := time.Since(start); took > 2*DefaultConnectTimeout || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("OpenURL gave up after %s: %v; want ErrUnavailable, timed out, within the connect timeout", took, err)
	}
}
