package review

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"go.uber.org/zap"
)

// OpenURL opens the review queue in the PostgreSQL database that url
// names (postgres://user@host/db?…, as libpq and pgx read it), bringing its
// schema up to date. Several serve replicas and the operator's CLI may
// share one database, as several processes share one SQLite file.
//
// The Store takes a lease (lease.go) that owns the items it opens, so
// that other replicas abandon them if it crashes, and, once something
// waits, listens for every replica's transitions (listen.go). A URL
// without connect_timeout gets DefaultConnectTimeout, so a server that
// does not answer fails a write within a bound instead of hanging it.
func OpenURL(ctx context.Context, rawURL string, log *zap.Logger, opts ...OpenOption) (*Store, error) {
	if log == nil {
		log = zap.NewNop()
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("open review store: store.url must be a postgres:// or postgresql:// URL")
	}
	shown := shownURL(u)
	if q := u.Query(); !q.Has("connect_timeout") {
		q.Set("connect_timeout", strconv.Itoa(int(DefaultConnectTimeout/time.Second)))
		u.RawQuery = q.Encode()
	}
	sqlDB, err := sql.Open("pgx", u.String())
	if err != nil {
		return nil, fmt.Errorf("open review store %s: %w", shown, err)
	}
	sqlDB.SetMaxOpenConns(4 * maxConns())
	sqlDB.SetMaxIdleConns(maxConns())
	s := newStore(&db{DB: sqlDB, binder: newBinder(dialectPostgres)}, shown, log.Named("review"))
	s.connURL, s.lease, s.owner, s.PollInterval = u.String(), DefaultLease, newLeaseID(), DefaultListenPollInterval
	s.leases.id = s.owner
	s.listener.presence = s.owner
	s.alive = leaseAlive
	for _, o := range opts {
		o(s)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, openError(shown, err)
	}
	if err := s.migrate(ctx); err != nil {
		sqlDB.Close()
		return nil, openError(shown, err)
	}
	s.bgCtx, s.bgStop = context.WithCancel(context.Background())
	if err := s.takeLease(ctx); err != nil {
		s.bgStop()
		sqlDB.Close()
		return nil, openError(shown, fmt.Errorf("take lease: %w", err))
	}
	return s, nil
}

// DefaultConnectTimeout bounds each connection attempt to the PostgreSQL
// server when store.url sets no connect_timeout.
const DefaultConnectTimeout = 5 * time.Second

// OpenOption changes how OpenURL opens a Store.
type OpenOption func(*Store)

// WithLease sets how long the Store's lease lasts without a renewal
// (store.lease; default DefaultLease): a crashed replica's reviews are
// abandoned this long after its last renewal. Renewals come every third
// of it.
func WithLease(d time.Duration) OpenOption {
	return func(s *Store) {
		if d > 0 {
			s.lease = d
		}
	}
}

// openError names why OpenURL failed, in words an operator can act on
// (connectProblem), wrapping ErrUnavailable when the server is out of
// reach.
// secretParams are the query parameters of a PostgreSQL URL that carry a
// secret, as libpq and pgx read them: a password may be given there
// instead of in the URL's user part.
var secretParams = []string{"password", "sslpassword"}

// shownURL is u as errors, logs and the ops listener's /status show the
// store: its password replaced by xxxxx wherever it was given, in the
// user part (url.URL.Redacted) or as a query parameter.
func shownURL(u *url.URL) string {
	c := *u
	if q := c.Query(); slices.ContainsFunc(secretParams, q.Has) {
		for _, k := range secretParams {
			if q.Has(k) {
				q.Set(k, "xxxxx")
			}
		}
		c.RawQuery = q.Encode()
	}
	return c.Redacted()
}

func openError(shown string, err error) error {
	problem := connectProblem(err)
	switch {
	case unreachable(err):
		return fmt.Errorf("open review store %s: %s: %w: %w", shown, problem, ErrUnavailable, err)
	case problem != "":
		return fmt.Errorf("open review store %s: %s: %w", shown, problem, err)
	}
	return fmt.Errorf("open review store %s: %w", shown, err)
}

// begin starts a write transaction. On PostgreSQL a pooled connection
// the server has closed (a restart, a failover, an administrator's
// pg_terminate_backend) fails the BEGIN that first uses it; nothing was
// done yet, so begin tries the next connection, as many times as the pool
// may hold idle ones, and a restarted server costs no write. A new
// connection that could not be made ends the tries: the server is out of
// reach now, and dialling it again would keep the write (and the server's
// turn, see Charge) waiting one connect timeout per try before it fails.
// Any other failure, and every failure after BEGIN, is the caller's: a
// write is never run twice.
func (s *storage) begin(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	for range maxConns() {
		var ce *pgconn.ConnectError
		if err == nil || s.db.dialect != dialectPostgres || !connectionLost(err) || errors.As(err, &ce) {
			break
		}
		tx, err = s.db.BeginTx(ctx, nil)
	}
	return tx, err
}

// connectionLost reports an error that says the connection is gone: the
// server said so (SQLSTATE class 08, connection exception, or 57P01-57P03:
// shutting down, crashed, starting), or the socket failed under pgx (pgx
// marks what it failed to send as safe to retry), or it was already closed.
func connectionLost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	return pgconn.SafeToRetry(err) || errors.As(err, &ne) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, driver.ErrBadConn)
}

// writeLockKey is the transaction-scoped advisory lock every write
// transaction takes on PostgreSQL: the letters "mcpxfw" as a number.
const writeLockKey = 0x6d6370786677

// lockWrites makes tx the only write transaction in the whole database
// until it ends. On SQLite, BEGIN IMMEDIATE already did. Every transition
// reads an item and the audit chain's head and then writes both, so on
// PostgreSQL two replicas' transactions must not interleave: this lock
// gives the chain one head and makes the first decision stand, as the file
// lock does for SQLite. It is coarse; decisions without a review
// (writeOne) do not take it, and the usage buckets they touch are updated
// by one atomic upsert each.
func (s *storage) lockWrites(ctx context.Context, tx *writeTx) error {
	if s.db.dialect != dialectPostgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", int64(writeLockKey))
	return err
}

// migratePostgres brings a PostgreSQL schema up to date under the write
// lock, so replicas starting together apply each migration once. The
// version lives in schema_version, PostgreSQL's stand-in for SQLite's
// user_version; both backends count the same migrations.
func (s *storage) migratePostgres(ctx context.Context) error {
	return s.write(ctx, func(tx *writeTx) error {
		// Looked up rather than CREATE … IF NOT EXISTS, which needs the
		// right to create in the schema even when the table is there: a
		// replica whose user may not change the schema opens an up-to-date
		// one.
		var exists bool
		if err := tx.QueryRowContext(ctx, "SELECT to_regclass('schema_version') IS NOT NULL").Scan(&exists); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if !exists {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE schema_version (
				one     INTEGER PRIMARY KEY CHECK (one = 1),
				version INTEGER NOT NULL)`); err != nil {
				return fmt.Errorf("create schema_version: %w", err)
			}
		}
		var have int
		err := tx.QueryRowContext(ctx, "SELECT version FROM schema_version WHERE one = 1").Scan(&have)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read schema version: %w", err)
		}
		if have > len(pgMigrations) {
			return fmt.Errorf("schema version %d is newer than this mcpx-fw understands (%d); upgrade mcpx-fw",
				have, len(pgMigrations))
		}
		for i := have; i < len(pgMigrations); i++ {
			if _, err := tx.ExecContext(ctx, pgMigrations[i]); err != nil {
				return schemaTooOld(have, i+1, err)
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO schema_version (one, version) VALUES (1, ?)
			ON CONFLICT (one) DO UPDATE SET version = excluded.version`, len(pgMigrations))
		return err
	})
}

// schemaTooOld names a schema this mcpx-fw needs to migrate but could not,
// typically because the user in store.url may not change it.
func schemaTooOld(have, step int, err error) error {
	var pe *pgconn.PgError
	hint := ""
	if errors.As(err, &pe) && pe.Code == "42501" {
		hint = "; the user in store.url may not change the schema: run `mcpx-fw store migrate` as the schema's owner"
	}
	return fmt.Errorf("schema version %d is older than this mcpx-fw's %d, and migration %d failed%s: %w",
		have, len(pgMigrations), step, hint, err)
}

// SchemaVersion returns how many migrations the store's database has:
// what `mcpx-fw check` compares with what this binary knows.
func (s *storage) SchemaVersion(ctx context.Context) (int, error) {
	q := "PRAGMA user_version"
	if s.db.dialect == dialectPostgres {
		q = "SELECT version FROM schema_version WHERE one = 1"
	}
	var v int
	if err := s.db.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return 0, fmt.Errorf("review store %s: schema version: %w", s.path, err)
	}
	return v, nil
}

// Backend names the database behind the store: "sqlite" or "postgres".
func (s *storage) Backend() string { return s.db.dialect.String() }

// pgStateMoves is the state machine the items table enforces, as in
// SQLite's items_state_moves trigger.
const pgStateMoves = `(OLD.state = 'pending' AND NEW.state IN ('approved', 'rejected', 'expired', 'abandoned'))
	OR (OLD.state = 'approved' AND NEW.state IN ('delivered', 'failed'))`

// pgMigrations mirror migrations step for step, in PostgreSQL's spelling:
// the same tables, columns, indexes and refusals, so both backends answer
// every query alike. Append only, as for SQLite. Two differences: items
// has a rowid column of its own (SQLite's is implicit), which List, Watch
// and sweeps order by; and the triggers are PL/pgSQL functions.
var pgMigrations = []string{
	// 1: items, history, decisions.
	`
CREATE TABLE items (
	rowid       BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
	id          TEXT PRIMARY KEY,
	parent      TEXT NOT NULL DEFAULT '',
	decision_id TEXT NOT NULL,
	server      TEXT NOT NULL,
	label       TEXT NOT NULL,
	stage       TEXT NOT NULL CHECK (stage IN ('request', 'result')),
	era         TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected',
	                'expired', 'abandoned', 'delivered', 'failed')),
	created_at  BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL,
	reasons     TEXT NOT NULL,
	request     BYTEA,
	result      BYTEA,
	context     BYTEA,
	owner       TEXT NOT NULL,
	decided_by  TEXT NOT NULL DEFAULT '',
	decided_at  BIGINT NOT NULL DEFAULT 0,
	note        TEXT NOT NULL DEFAULT '',
	finished_at BIGINT NOT NULL DEFAULT 0,
	finish_note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX items_state_created ON items (state, created_at);

CREATE FUNCTION items_state_moves() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NOT (` + pgStateMoves + `) THEN
		RAISE EXCEPTION 'review: state change not allowed';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER items_state_moves BEFORE UPDATE OF state ON items
FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION items_state_moves();

CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '%', TG_ARGV[0];
END $$;

CREATE TABLE history (
	seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	item_id    TEXT NOT NULL REFERENCES items (id),
	from_state TEXT NOT NULL,
	to_state   TEXT NOT NULL,
	actor      TEXT NOT NULL,
	note       TEXT NOT NULL,
	process    TEXT NOT NULL,
	at         BIGINT NOT NULL
);
CREATE INDEX history_item ON history (item_id, seq);
CREATE TRIGGER history_append_only BEFORE UPDATE OR DELETE ON history
FOR EACH ROW EXECUTE FUNCTION refuse_change('review: history is append-only');
CREATE TRIGGER history_no_truncate BEFORE TRUNCATE ON history
FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('review: history is append-only');

CREATE TABLE decisions (
	id         TEXT PRIMARY KEY,
	server     TEXT NOT NULL,
	stage      TEXT NOT NULL,
	outcome    TEXT NOT NULL,
	reasons    TEXT NOT NULL,
	review_id  TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX decisions_review ON decisions (review_id) WHERE review_id <> '';
`,
	// 2: usage per decision.
	`
ALTER TABLE decisions ADD COLUMN requests BIGINT NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN requested_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN returned_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN tokens BIGINT NOT NULL DEFAULT 0;
CREATE INDEX decisions_usage ON decisions
	(server, created_at, requests, requested_tokens, returned_tokens, tokens);
`,
	// 3: edits, answers, erasure, and the audit chain with its head.
	`
ALTER TABLE items ADD COLUMN edited BYTEA;
ALTER TABLE items ADD COLUMN edit_diff TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN answer BYTEA;
ALTER TABLE items ADD COLUMN erased_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX items_erasable ON items (erased_at, state);

CREATE TABLE audit (
	seq             BIGINT PRIMARY KEY,
	at              BIGINT NOT NULL,
	event           TEXT NOT NULL,
	item_id         TEXT NOT NULL,
	parent          TEXT NOT NULL,
	server          TEXT NOT NULL,
	stage           TEXT NOT NULL,
	decision_id     TEXT NOT NULL,
	policy_revision TEXT NOT NULL,
	operator        TEXT NOT NULL,
	request_digest  TEXT NOT NULL,
	result_digest   TEXT NOT NULL,
	outcome         TEXT NOT NULL,
	detail          TEXT NOT NULL,
	prev            TEXT NOT NULL,
	hash            TEXT NOT NULL
);
CREATE INDEX audit_at ON audit (at);
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit
FOR EACH ROW EXECUTE FUNCTION refuse_change('review: the audit log is append-only');
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('review: the audit log is append-only');

CREATE TABLE audit_head (
	one  INTEGER PRIMARY KEY CHECK (one = 1),
	seq  BIGINT NOT NULL,
	hash TEXT NOT NULL
);
`,
	// 4: usage buckets, kept by the database in the statement that inserts
	// a decision, and the decisions already stored summed once. ON CONFLICT DO UPDATE is atomic under concurrent
	// inserts, so replicas adding to one bucket never lose an addition.
	`
CREATE TABLE usage_buckets (
	server           TEXT NOT NULL,
	width            BIGINT NOT NULL,
	start            BIGINT NOT NULL,
	requests         BIGINT NOT NULL,
	requested_tokens BIGINT NOT NULL,
	returned_tokens  BIGINT NOT NULL,
	tokens           BIGINT NOT NULL,
	PRIMARY KEY (server, width, start)
);

CREATE FUNCTION decisions_usage_buckets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO usage_buckets AS b (server, width, start, requests, requested_tokens, returned_tokens, tokens)
	SELECT NEW.server, w.width, NEW.created_at - ((NEW.created_at % w.width) + w.width) % w.width,
		NEW.requests, NEW.requested_tokens, NEW.returned_tokens, NEW.tokens
	FROM (VALUES (1000000000::BIGINT), (60000000000::BIGINT), (3600000000000::BIGINT)) AS w (width)
	ON CONFLICT (server, width, start) DO UPDATE SET
		requests = b.requests + excluded.requests,
		requested_tokens = b.requested_tokens + excluded.requested_tokens,
		returned_tokens = b.returned_tokens + excluded.returned_tokens,
		tokens = b.tokens + excluded.tokens;
	RETURN NULL;
END $$;
CREATE TRIGGER decisions_usage_buckets AFTER INSERT ON decisions
FOR EACH ROW WHEN (NEW.requests <> 0 OR NEW.requested_tokens <> 0 OR NEW.returned_tokens <> 0 OR NEW.tokens <> 0)
EXECUTE FUNCTION decisions_usage_buckets();

INSERT INTO usage_buckets (server, width, start, requests, requested_tokens, returned_tokens, tokens)
SELECT server, w.width, created_at - ((created_at % w.width) + w.width) % w.width AS bucket,
	SUM(requests), SUM(requested_tokens), SUM(returned_tokens), SUM(tokens)
FROM decisions, (VALUES (1000000000::BIGINT), (60000000000::BIGINT), (3600000000000::BIGINT)) AS w (width)
WHERE requests <> 0 OR requested_tokens <> 0 OR returned_tokens <> 0 OR tokens <> 0
GROUP BY server, w.width, bucket;
`,
	// 5: continuations any replica can resume.
	`
CREATE TABLE continuations (
	nonce       TEXT PRIMARY KEY,
	server      TEXT NOT NULL,
	call_digest TEXT NOT NULL,
	expires_at  BIGINT NOT NULL,
	payload     BYTEA NOT NULL
);
CREATE INDEX continuations_expiry ON continuations (expires_at);
`,
	// 6: leases and wake-ups for replicas (lease.go, listen.go). A Store
	// holds a lease while it runs and owns the items it opens through it;
	// a lease past expires_at (the database's clock, so replicas' clocks
	// need not agree) is dead, and any replica abandons its items. Every
	// history row, that is every transition of an item, notifies its id on
	// reviewChannel; PostgreSQL delivers it only when the transaction
	// commits, so a listener never wakes for a change that was rolled back.
	`
CREATE TABLE leases (
	id         TEXT PRIMARY KEY,
	holder     TEXT NOT NULL,
	taken_at   TIMESTAMPTZ NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL
);

CREATE FUNCTION history_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('` + reviewChannel + `', NEW.item_id);
	RETURN NULL;
END $$;
CREATE TRIGGER history_notify AFTER INSERT ON history
FOR EACH ROW EXECUTE FUNCTION history_notify();
`,
	// 7: a request's charge kept on its first decision and changed there
	// (see the SQLite migration 7).
	`
ALTER TABLE decisions ADD COLUMN settled_by TEXT NOT NULL DEFAULT '';

CREATE TRIGGER decisions_fixed BEFORE UPDATE ON decisions
FOR EACH ROW WHEN (NEW.id IS DISTINCT FROM OLD.id OR NEW.server IS DISTINCT FROM OLD.server
	OR NEW.stage IS DISTINCT FROM OLD.stage OR NEW.created_at IS DISTINCT FROM OLD.created_at
	OR NEW.requests IS DISTINCT FROM OLD.requests OR OLD.settled_by <> '')
EXECUTE FUNCTION refuse_change('review: only an unsettled charge of a decision may change');

CREATE FUNCTION decisions_usage_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO usage_buckets AS b (server, width, start, requests, requested_tokens, returned_tokens, tokens)
	SELECT OLD.server, w.width, OLD.created_at - ((OLD.created_at % w.width) + w.width) % w.width, 0,
		NEW.requested_tokens - OLD.requested_tokens, NEW.returned_tokens - OLD.returned_tokens, NEW.tokens - OLD.tokens
	FROM (VALUES (1000000000::BIGINT), (60000000000::BIGINT), (3600000000000::BIGINT)) AS w (width)
	ON CONFLICT (server, width, start) DO UPDATE SET
		requested_tokens = b.requested_tokens + excluded.requested_tokens,
		returned_tokens = b.returned_tokens + excluded.returned_tokens,
		tokens = b.tokens + excluded.tokens;
	RETURN NULL;
END $$;
CREATE TRIGGER decisions_usage_changed AFTER UPDATE OF requested_tokens, returned_tokens, tokens ON decisions
FOR EACH ROW WHEN (NEW.requested_tokens <> OLD.requested_tokens OR NEW.returned_tokens <> OLD.returned_tokens
	OR NEW.tokens <> OLD.tokens)
EXECUTE FUNCTION decisions_usage_changed();
`,
	// 8: the reasons waived on the decision that opened an item (see the
	// SQLite migration 8).
	`ALTER TABLE items ADD COLUMN waived TEXT NOT NULL DEFAULT '[]';`,
	// 9: each decision's policy input, kept for replay (see the SQLite
	// migration 9).
	`
CREATE TABLE decision_inputs (
	decision_id  TEXT PRIMARY KEY,
	server       TEXT NOT NULL,
	kind         TEXT NOT NULL,
	stage        TEXT NOT NULL,
	revision     TEXT NOT NULL,
	outcome      TEXT NOT NULL,
	reasons      TEXT NOT NULL,
	await_answer INTEGER NOT NULL,
	input        BYTEA,
	created_at   BIGINT NOT NULL
);
CREATE INDEX decision_inputs_created ON decision_inputs (created_at);
`,
	// 10: retries of bridged calls handed between replicas (see the SQLite
	// migration 10). Each row asked of a holder notifies "ask:<holder>" on
	// handoverChannel, each row answered "answer:<nonce>", and each row
	// deleted "gone:<nonce>", when the statement commits.
	`
CREATE TABLE handovers (
	nonce       TEXT PRIMARY KEY,
	holder      TEXT NOT NULL,
	server      TEXT NOT NULL,
	call_digest TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('asked', 'taken', 'answered')),
	expires_at  BIGINT NOT NULL,
	asked       BYTEA NOT NULL,
	answer      BYTEA
);
CREATE INDEX handovers_holder ON handovers (holder, state);
CREATE INDEX handovers_expiry ON handovers (expires_at);

CREATE FUNCTION handovers_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM pg_notify('` + handoverChannel + `', 'ask:' || NEW.holder);
	ELSIF TG_OP = 'DELETE' THEN
		PERFORM pg_notify('` + handoverChannel + `', 'gone:' || OLD.nonce);
	ELSIF NEW.state = 'answered' THEN
		PERFORM pg_notify('` + handoverChannel + `', 'answer:' || NEW.nonce);
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER handovers_notify AFTER INSERT OR UPDATE OF state OR DELETE ON handovers
FOR EACH ROW EXECUTE FUNCTION handovers_notify();
`,
	// 11: the kept inputs of one server, oldest first (see the SQLite
	// migration 11).
	`CREATE INDEX decision_inputs_server ON decision_inputs (server, created_at);`,
}
