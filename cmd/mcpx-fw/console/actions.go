package console

import (
	"context"
	"time"
)

// Actions is what the console needs from the firewall: the queue, one
// review as the operator reads it, and the decisions, each decided by the
// same rules as the review commands. An error a decision returns is shown
// to the operator as the refusal it is (through inert); the item stays as
// the store has it.
type Actions interface {
	Queue(ctx context.Context) ([]Summary, error)
	Review(ctx context.Context, id string) (Review, error)
	// Approve approves the item; doc is the edit document as the operator
	// left it (unchanged, or "" for a plain approval, approves the item as
	// it is).
	Approve(ctx context.Context, id, doc, note string) error
	Reject(ctx context.Context, id, reason string) error
	Answer(ctx context.Context, id, text, note string) error
	Cost(ctx context.Context, id string) (Cost, error)
	Audit(ctx context.Context) (Audit, error)
	// Changed is closed at the store's next change this process learns of
	// at once; the console polls the queue besides, for other processes'.
	Changed() <-chan struct{}
}

// Summary is one row of the queue.
type Summary struct {
	ID, Server, Label, Kind, Stage, State string
	Reasons                               []string
	ExpiresAt                             time.Time
}

// Review is one item as the review page shows it. Every string but the
// booleans' refusals is as the store or the upstream has it: the page
// renders each through inert.
type Review struct {
	Summary
	DecisionID string
	// Waived are the baseline reasons the server's policy waived on the
	// decision that opened the review, as Reasons are given.
	Waived []string
	// Show is the whole item as review show prints it (settings, system
	// prompt, messages, tools with their schemas, an elicitation's form or
	// URL, the completion at stage two), already through inert.
	Show string
	// Doc is the edit document (the one approve --edit opens), "" when
	// the item cannot be edited; DocNote says why not.
	Doc, DocNote string
	// Approvable is whether an approval can pass; Refusal says why not
	// (a blocker, a decided item, a host that cannot answer).
	Approvable bool
	Refusal    string
	Answerable bool
	Decided    string // who decided and how, once decided
	Revision   string // the policy revision deciding now
}

// Cost is what an approval spends: the request's estimated tokens and
// maxTokens, and the server's use of sampling and budget per window.
type Cost struct {
	EstimatedTokens, MaxTokens int64
	Windows                    []Window
}

// Window is a server's use in one sliding window, and its budget there
// (0: none configured).
type Window struct {
	Name                         string
	Requests, Tokens             int64
	BudgetRequests, BudgetTokens int64
}

// Audit is the audit log and what verifying its chain found.
type Audit struct {
	Entries  []AuditEntry
	Verified string // "ok: …" or the first broken entry
	Intact   bool
	Revision string
}

// AuditEntry is one line of the log as the page shows it.
type AuditEntry struct {
	Seq                                           int64
	At                                            time.Time
	Event, Item, Server, Stage, Operator, Outcome string
	Decision, Policy                              string
}
