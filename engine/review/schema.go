package review

import (
	"context"
	"fmt"
)

// migrations are applied in order; PRAGMA user_version counts how many a
// database has. Append only: an applied migration is never edited, because
// a queue written by an older binary must keep opening.
//
// Times are INTEGER Unix nanoseconds (0 = unset) so deadlines compare in
// SQL and round-trip exactly. JSON payloads are BLOBs kept byte for byte.
var migrations = []string{
	// 1: items, their append-only history, and the firewall's decisions.
	`
CREATE TABLE items (
	id          TEXT PRIMARY KEY,
	parent      TEXT NOT NULL DEFAULT '',
	decision_id TEXT NOT NULL,
	server      TEXT NOT NULL,
	label       TEXT NOT NULL,
	stage       TEXT NOT NULL CHECK (stage IN ('request', 'result')),
	era         TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected',
	                'expired', 'abandoned', 'delivered', 'failed')),
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	reasons     TEXT NOT NULL,
	request     BLOB,
	result      BLOB,
	context     BLOB,
	owner       TEXT NOT NULL,
	decided_by  TEXT NOT NULL DEFAULT '',
	decided_at  INTEGER NOT NULL DEFAULT 0,
	note        TEXT NOT NULL DEFAULT '',
	finished_at INTEGER NOT NULL DEFAULT 0,
	finish_note TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX items_state_created ON items (state, created_at);

-- The database itself refuses a state change outside the state machine, so
-- no code path (or hand-written SQL) can reopen or re-decide an item.
CREATE TRIGGER items_state_moves BEFORE UPDATE OF state ON items
WHEN NOT ((OLD.state = 'pending' AND NEW.state IN ('approved', 'rejected', 'expired', 'abandoned'))
       OR (OLD.state = 'approved' AND NEW.state IN ('delivered', 'failed')))
BEGIN
	SELECT RAISE(ABORT, 'review: state change not allowed');
END;

CREATE TABLE history (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	item_id    TEXT NOT NULL REFERENCES items (id),
	from_state TEXT NOT NULL,
	to_state   TEXT NOT NULL,
	actor      TEXT NOT NULL,
	note       TEXT NOT NULL,
	process    TEXT NOT NULL,
	at         INTEGER NOT NULL
) STRICT;
CREATE INDEX history_item ON history (item_id, seq);
CREATE TRIGGER history_no_update BEFORE UPDATE ON history
BEGIN
	SELECT RAISE(ABORT, 'review: history is append-only');
END;
CREATE TRIGGER history_no_delete BEFORE DELETE ON history
BEGIN
	SELECT RAISE(ABORT, 'review: history is append-only');
END;

CREATE TABLE decisions (
	id         TEXT PRIMARY KEY,
	server     TEXT NOT NULL,
	stage      TEXT NOT NULL,
	outcome    TEXT NOT NULL,
	reasons    TEXT NOT NULL,
	review_id  TEXT NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX decisions_review ON decisions (review_id) WHERE review_id <> '';
`,
	// 2: what each decision added to its server's use of sampling, summed
	// over sliding windows for budgets and rate limits (usage.go). tokens
	// may be negative: a completion releases the part of its request's
	// maxTokens reservation the model did not use. The index covers the
	// window sums, so they read the index alone.
	`
ALTER TABLE decisions ADD COLUMN requests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN requested_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN returned_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
CREATE INDEX decisions_usage ON decisions
	(server, created_at, requests, requested_tokens, returned_tokens, tokens);
`,
	// 3: what an operator changed or wrote (edit.go, answer in decide.go),
	// when retention erased an item's text (prune.go), and the hash-chained
	// audit log with its head (audit.go). The chain starts at this
	// migration; transitions before it are only in history.
	`
ALTER TABLE items ADD COLUMN edited BLOB;
ALTER TABLE items ADD COLUMN edit_diff TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN answer BLOB;
ALTER TABLE items ADD COLUMN erased_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX items_erasable ON items (erased_at, state);

CREATE TABLE audit (
	seq             INTEGER PRIMARY KEY,
	at              INTEGER NOT NULL,
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
) STRICT;
CREATE INDEX audit_at ON audit (at);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
	SELECT RAISE(ABORT, 'review: the audit log is append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
	SELECT RAISE(ABORT, 'review: the audit log is append-only');
END;

-- The chain's head, written with every entry: a deleted last entry or an
-- entry appended by hand shows as a chain that ends somewhere else.
CREATE TABLE audit_head (
	one  INTEGER PRIMARY KEY CHECK (one = 1),
	seq  INTEGER NOT NULL,
	hash TEXT NOT NULL
) STRICT;
`,
	// 4: each server's usage summed per second, minute and hour
	// (usage_buckets.go), so a window's sum reads a bounded number of rows
	// instead of every decision in it. The database keeps the sums itself:
	// the trigger adds every decision that carries usage in the statement
	// that inserts it, whichever code (or hand) inserts it. The widths, in
	// nanoseconds, are bucketWidths; a bucket starts at a whole multiple of
	// its width since the Unix epoch (rounded down for times before it).
	// Decisions already stored are summed here once.
	`
CREATE TABLE usage_buckets (
	server           TEXT NOT NULL,
	width            INTEGER NOT NULL,
	start            INTEGER NOT NULL,
	requests         INTEGER NOT NULL,
	requested_tokens INTEGER NOT NULL,
	returned_tokens  INTEGER NOT NULL,
	tokens           INTEGER NOT NULL,
	PRIMARY KEY (server, width, start)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER decisions_usage_buckets AFTER INSERT ON decisions
WHEN NEW.requests <> 0 OR NEW.requested_tokens <> 0 OR NEW.returned_tokens <> 0 OR NEW.tokens <> 0
BEGIN
	INSERT INTO usage_buckets (server, width, start, requests, requested_tokens, returned_tokens, tokens)
	SELECT NEW.server, w.column1, NEW.created_at - ((NEW.created_at % w.column1) + w.column1) % w.column1,
		NEW.requests, NEW.requested_tokens, NEW.returned_tokens, NEW.tokens
	FROM (VALUES (1000000000), (60000000000), (3600000000000)) AS w
	WHERE true
	ON CONFLICT DO UPDATE SET
		requests = requests + excluded.requests,
		requested_tokens = requested_tokens + excluded.requested_tokens,
		returned_tokens = returned_tokens + excluded.returned_tokens,
		tokens = tokens + excluded.tokens;
END;

INSERT INTO usage_buckets (server, width, start, requests, requested_tokens, returned_tokens, tokens)
SELECT server, w.column1, created_at - ((created_at % w.column1) + w.column1) % w.column1 AS bucket,
	SUM(requests), SUM(requested_tokens), SUM(returned_tokens), SUM(tokens)
FROM decisions, (VALUES (1000000000), (60000000000), (3600000000000)) AS w
WHERE requests <> 0 OR requested_tokens <> 0 OR returned_tokens <> 0 OR tokens <> 0
GROUP BY server, w.column1, bucket;
`,
	// 5: what a serve replica handed to a 2026-07-28 host and needs back
	// to check the host's answers, so that any replica sharing the store
	// can resume the call (continuation.go). A row is taken (deleted) once;
	// expired rows are swept.
	`
CREATE TABLE continuations (
	nonce       TEXT PRIMARY KEY,
	server      TEXT NOT NULL,
	call_digest TEXT NOT NULL,
	expires_at  INTEGER NOT NULL,
	payload     BLOB NOT NULL
) STRICT;
CREATE INDEX continuations_expiry ON continuations (expires_at);
`,
	// 6: nothing on SQLite. PostgreSQL's migration 6 adds the replicas'
	// leases and the notification of every transition (postgres.go); a
	// SQLite file is shared only by processes of one machine, which own
	// their items by process id (owner.go). The step keeps both backends
	// counting the same versions.
	`SELECT 1`,
	// 7: a request's charge is kept on its first decision, at the time the
	// request arrived, and changed there (settlement.go): its completion
	// settles it, an operator's edit reserves it again, a refusal after
	// it was reserved releases it. settled_by names what settled or
	// released it; a settled charge never changes again. The trigger adds
	// each change to the buckets of the decision's own time, so every
	// window counts a request once, whenever its charge changed.
	`
ALTER TABLE decisions ADD COLUMN settled_by TEXT NOT NULL DEFAULT '';

CREATE TRIGGER decisions_fixed BEFORE UPDATE ON decisions
WHEN NEW.id IS NOT OLD.id OR NEW.server IS NOT OLD.server OR NEW.stage IS NOT OLD.stage
	OR NEW.created_at IS NOT OLD.created_at OR NEW.requests IS NOT OLD.requests OR OLD.settled_by <> ''
BEGIN
	SELECT RAISE(ABORT, 'review: only an unsettled charge of a decision may change');
END;

CREATE TRIGGER decisions_usage_changed AFTER UPDATE OF requested_tokens, returned_tokens, tokens ON decisions
WHEN NEW.requested_tokens <> OLD.requested_tokens OR NEW.returned_tokens <> OLD.returned_tokens OR NEW.tokens <> OLD.tokens
BEGIN
	INSERT INTO usage_buckets (server, width, start, requests, requested_tokens, returned_tokens, tokens)
	SELECT OLD.server, w.column1, OLD.created_at - ((OLD.created_at % w.column1) + w.column1) % w.column1, 0,
		NEW.requested_tokens - OLD.requested_tokens, NEW.returned_tokens - OLD.returned_tokens, NEW.tokens - OLD.tokens
	FROM (VALUES (1000000000), (60000000000), (3600000000000)) AS w
	WHERE true
	ON CONFLICT DO UPDATE SET
		requested_tokens = requested_tokens + excluded.requested_tokens,
		returned_tokens = returned_tokens + excluded.returned_tokens,
		tokens = tokens + excluded.tokens;
END;
`,
	// 8: the baseline reasons the server's policy waived on the decision
	// that opened an item, shown with it; an item from before has none.
	`ALTER TABLE items ADD COLUMN waived TEXT NOT NULL DEFAULT '[]';`,
	// 9: each decision's policy input, kept for replay (inputs.go): the
	// document as evaluated (NULL for a decision made before the policy
	// ran), the revision that evaluated it and what it decided. Rows are
	// deleted after store.KeepInputs (Prune), oldest first by created_at.
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
	input        BLOB,
	created_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX decision_inputs_created ON decision_inputs (created_at);
`,
	// 10: a retry of a bridged call that reached another replica than the
	// one holding the call, handed to that one (handover.go): the host's
	// answers as asked, the upstream's answer once the holder resumed it;
	// both sealed by relay. A row is asked once per state (its nonce).
	`
CREATE TABLE handovers (
	nonce       TEXT PRIMARY KEY,
	holder      TEXT NOT NULL,
	server      TEXT NOT NULL,
	call_digest TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('asked', 'taken', 'answered')),
	expires_at  INTEGER NOT NULL,
	asked       BLOB NOT NULL,
	answer      BLOB
) STRICT;
CREATE INDEX handovers_holder ON handovers (holder, state);
CREATE INDEX handovers_expiry ON handovers (expires_at);
`,
	// 11: the kept inputs of one server, oldest first: what trimInputs
	// deletes when they take more than KeepInputsBytes (inputs.go).
	`CREATE INDEX decision_inputs_server ON decision_inputs (server, created_at);`,
}

// migrate brings the schema up to date in one transaction. The write lock
// makes concurrent first opens by several processes safe: the second one
// sees the first one's user_version and applies nothing.
func (s *storage) migrate(ctx context.Context) error {
	if s.db.dialect == dialectPostgres {
		return s.migratePostgres(ctx)
	}
	return s.write(ctx, func(tx *writeTx) error {
		var have int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if have > len(migrations) {
			return fmt.Errorf("schema version %d is newer than this mcpx-fw understands (%d); upgrade mcpx-fw",
				have, len(migrations))
		}
		for i := have; i < len(migrations); i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations)))
		return err
	})
}
