package review

import (
	"context"
	"encoding/json"
	"time"
)

// contract is the store as the rest of mcpx-fw uses it, written down so
// both backends are held to one list. Callers use the concrete *Store (one
// type, whichever database is behind it: see dialect.go); this interface
// only names the contract and, through the assertion below, keeps it
// compiling. The store suite (every _test.go here, run once per backend by
// TestMain) is what checks that each backend keeps it.
//
// Who calls what:
//
//   - engine: Commit (every decision, with its usage and, for an
//     escalation, the review it opens, atomically), UsageReader (the
//     windowed sums read before every decision) and its Charge and
//     ChargeFor (read, decide and commit in one turn per server, for every
//     decision that charges usage or settles a request's charge);
//     PolicyRevision is set by cmd to the engine's revision.
//   - relay: Add (a review opened outside the engine), Wait (blocks until a
//     decision, expiry or cancellation), PendingIDs (one poll for every
//     waiter of a process), Changed (when to run that poll at once),
//     Finish (delivered or failed, once), PollInterval, and
//     PutContinuation, TakeContinuation and HeldContinuations (a
//     2026-07-28 host's call, resumed by any replica).
//   - cmd: Open/OpenURL, Close, AbandonOrphans (serve's start), List, Get,
//     Decision, Approve, ApproveEdited, Answer, Reject (the operator's
//     CLI), Watch, Audit, VerifyAudit, Prune, Path, SchemaVersion and
//     Backend (check).
//
// The guarantees each backend must keep, whatever process or replica
// calls: every transition is one transaction with one history row and one
// audit entry; the first decision stands and a later one gets a
// *DecidedError; an expired or abandoned item is never approved or
// delivered; Finish happens at most once; the audit chain has one head and
// VerifyAudit names a tampered entry; a decision and its usage are stored
// together or not at all, and UsageIn/UsageReader sum any set of windows in
// one read whose cost does not grow with the decisions in them; a decision
// committed by Charge was decided on its server's usage as it stood when
// it committed, whoever else charged that server at the same time; a
// request's charge is kept on its first decision, settled there at most
// once and released there when its review closes without reaching the
// host; a
// continuation is taken at most once, by one caller among all processes,
// and never after it expired; the items of a waiter that is gone (a
// process id on SQLite, a lease that ran out on PostgreSQL) are closed,
// and a live waiter's never; a write that fails because the server is out
// of reach wraps ErrUnavailable and is never retried once its COMMIT was
// sent.
type contract interface {
	// The review queue.
	Add(ctx context.Context, it Item, timeout time.Duration) (Item, error)
	Get(ctx context.Context, id string) (Item, error)
	List(ctx context.Context, f Filter) ([]Item, error)
	PendingIDs(ctx context.Context) (map[string]bool, error)
	Changed() <-chan struct{}
	Wait(ctx context.Context, id string) (Item, error)
	Watch(ctx context.Context, f Filter, fn func(Item) error) error
	History(ctx context.Context, id string) ([]Transition, error)
	AbandonOrphans(ctx context.Context) (int, error)

	// Decisions by operators, and what became of them.
	Approve(ctx context.Context, id, by, note string) (Item, error)
	ApproveEdited(ctx context.Context, id, by, note string, e Edit) (Item, error)
	Answer(ctx context.Context, id, by, note string, completion json.RawMessage) (Item, error)
	Reject(ctx context.Context, id, by, reason string) (Item, error)
	Finish(ctx context.Context, id string, st State, note string) (Item, error)

	// The firewall's decisions and usage.
	Commit(ctx context.Context, e Entry) (Item, error)
	RecordDecision(ctx context.Context, d Decision) error
	Decision(ctx context.Context, id string) (Decision, error)
	UsageIn(ctx context.Context, server string, windows map[string]time.Duration, at time.Time) (map[string]Usage, error)
	UsageReader(ctx context.Context, windows map[string]time.Duration) (*UsageReader, error)

	// Continuations of 2026-07-28 host calls, resumable by any replica.
	PutContinuation(ctx context.Context, c Continuation) error
	TakeContinuation(ctx context.Context, nonce, server, call string) ([]byte, error)
	HeldContinuations(ctx context.Context, nonces []string) (map[string]bool, error)

	// The audit log and retention.
	Audit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
	VerifyAudit(ctx context.Context) (ChainHead, int, error)
	Prune(ctx context.Context, retain time.Duration) (int, error)

	// The store itself.
	Path() string
	Backend() string
	SchemaVersion(ctx context.Context) (int, error)
	Close() error
}

var _ contract = (*Store)(nil)
