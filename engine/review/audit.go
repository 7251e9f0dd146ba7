package review

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Event says what happened to an item in one audit entry.
type Event string

// The events of the audit log: one per transition, plus erased when
// retention removes an item's text.
const (
	EventOpened    Event = "opened"
	EventApproved  Event = "approved"
	EventEdited    Event = "edited"   // approved with the operator's changes
	EventAnswered  Event = "answered" // the operator wrote the completion
	EventRejected  Event = "rejected"
	EventExpired   Event = "expired"
	EventAbandoned Event = "abandoned"
	EventDelivered Event = "delivered"
	EventFailed    Event = "failed"
	EventErased    Event = "erased"
)

// AuditEntry is one entry of the append-only, hash-chained audit log. It
// holds digests, never prompt or completion text, so retention can erase
// the text and the chain still verifies.
type AuditEntry struct {
	Seq            int64     `json:"seq"`
	At             time.Time `json:"at"`
	Event          Event     `json:"event"`
	ItemID         string    `json:"review_id"`
	Parent         string    `json:"parent,omitempty"`
	Server         string    `json:"server"`
	Stage          string    `json:"stage"`
	DecisionID     string    `json:"decision_id"`
	PolicyRevision string    `json:"policy_revision"`
	// Operator is the person who acted; "" when the firewall or the queue
	// itself did (opened, expired, abandoned, delivered).
	Operator string `json:"operator"`
	// RequestDigest and ResultDigest are "sha256:" digests of the request
	// and completion as they stood after the event: the edited ones after
	// an edit, the operator's completion after an answer.
	RequestDigest string `json:"request_digest"`
	ResultDigest  string `json:"result_digest,omitempty"`
	Outcome       State  `json:"outcome"` // the item's state after the event
	// Detail is the queue's or firewall's own fixed note; an operator's
	// free text stays with the item, where retention can reach it.
	Detail string `json:"detail,omitempty"`
	Prev   string `json:"prev"` // the previous entry's Hash; "" for the first
	Hash   string `json:"hash"`
}

// chainHash is the entry's hash: SHA-256 over every field but Hash, each
// length-prefixed so no two different entries encode alike.
func (e AuditEntry) chainHash() string {
	var b strings.Builder
	for _, f := range []string{
		strconv.FormatInt(e.Seq, 10), strconv.FormatInt(toNanos(e.At), 10),
		string(e.Event), e.ItemID, e.Parent, e.Server, e.Stage, e.DecisionID,
		e.PolicyRevision, e.Operator, e.RequestDigest, e.ResultDigest,
		string(e.Outcome), e.Detail, e.Prev,
	} {
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
		b.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// Digest is the "sha256:" digest the audit log keeps in place of a payload;
// "" for none.
func Digest(payload []byte) string {
	if len(payload) == 0 {
		return ""
	}
	sum := sha256.Sum256(payload)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// transitionEntry describes the item's latest transition, read back after
// its row changed.
func transitionEntry(it Item, from State, actor, note string, at time.Time) AuditEntry {
	e := itemEntry(it, transitionEvent(it, from), at)
	e.Operator = actor
	if actor == "" {
		e.Detail = note
	}
	return e
}

// itemEntry fills what every entry about it carries.
func itemEntry(it Item, ev Event, at time.Time) AuditEntry {
	e := AuditEntry{At: at, Event: ev, ItemID: it.ID, Parent: it.Parent, Server: it.Server,
		Stage: it.Stage, DecisionID: it.DecisionID, Outcome: it.State}
	e.RequestDigest, e.ResultDigest = Digest(it.Request), Digest(it.Result)
	if it.Edited != nil && it.Stage == StageRequest {
		e.RequestDigest = Digest(it.Edited)
	}
	if it.Edited != nil && it.Stage == StageResult {
		e.ResultDigest = Digest(it.Edited)
	}
	if it.Answer != nil {
		e.ResultDigest = Digest(it.Answer)
	}
	return e
}

func transitionEvent(it Item, from State) Event {
	switch {
	case from == "":
		return EventOpened
	case it.State != StateApproved:
		return Event(it.State)
	case it.Answer != nil:
		return EventAnswered
	case it.Edited != nil:
		return EventEdited
	}
	return EventApproved
}

// auditChain is the audit log: it appends entries inside the write that
// makes the transition they record, each holding the hash of the one
// before, and reads and verifies them. It touches the audit and
// audit_head tables only.
type auditChain struct {
	*storage
	// policy is the Store's PolicyRevision, read at each append (it may be
	// set after Open, before the first write).
	policy *func() string
}

// appendAudit chains e to the head and writes both inside tx. The caller
// holds the write lock, so the head cannot move underneath.
func (a *auditChain) appendAudit(ctx context.Context, tx *writeTx, e AuditEntry) error {
	head, err := auditHead(ctx, tx)
	if err != nil {
		return err
	}
	e.Seq, e.Prev, e.PolicyRevision = head.Seq+1, head.Hash, a.revision()
	e.At = e.At.UTC()
	e.Hash = e.chainHash()
	_, err = tx.ExecContext(ctx, `INSERT INTO audit (`+auditColumns+`) VALUES
		(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		e.Seq, toNanos(e.At), string(e.Event), e.ItemID, e.Parent, e.Server, e.Stage,
		e.DecisionID, e.PolicyRevision, e.Operator, e.RequestDigest, e.ResultDigest,
		string(e.Outcome), e.Detail, e.Prev, e.Hash)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit_head (one, seq, hash) VALUES (1, ?, ?)
		ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`, e.Seq, e.Hash)
	return err
}

// revision names the policy in force, for the entry being appended.
func (a *auditChain) revision() string {
	if *a.policy == nil {
		return ""
	}
	return (*a.policy)()
}

// ChainHead is where the audit chain ends: the last entry's number and
// hash. An operator who notes it can later tell a chain that was cut back
// and rebuilt from the one they saw.
type ChainHead struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

func auditHead(ctx context.Context, q querier) (ChainHead, error) {
	var h ChainHead
	err := q.QueryRowContext(ctx, "SELECT seq, hash FROM audit_head WHERE one = 1").Scan(&h.Seq, &h.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return ChainHead{}, nil
	}
	if err != nil {
		return ChainHead{}, fmt.Errorf("audit head: %w", err)
	}
	return h, nil
}

const auditColumns = `seq, at, event, item_id, parent, server, stage, decision_id,
	policy_revision, operator, request_digest, result_digest, outcome, detail, prev, hash`

func scanAudit(r scanner) (AuditEntry, error) {
	var e AuditEntry
	var at int64
	err := r.Scan(&e.Seq, &at, &e.Event, &e.ItemID, &e.Parent, &e.Server, &e.Stage,
		&e.DecisionID, &e.PolicyRevision, &e.Operator, &e.RequestDigest, &e.ResultDigest,
		&e.Outcome, &e.Detail, &e.Prev, &e.Hash)
	e.At = fromNanos(at)
	return e, err
}

// AuditFilter selects entries for Audit.
type AuditFilter struct {
	Since  time.Time // entries at or after it; zero for all
	Server string    // one server's entries; "" for all
	ItemID string    // one item's entries; "" for all
}

// Audit returns the entries f selects, oldest first.
func (a *auditChain) Audit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	rows, err := a.db.QueryContext(ctx, "SELECT "+auditColumns+` FROM audit
		WHERE at >= ? AND (? = '' OR server = ?) AND (? = '' OR item_id = ?) ORDER BY seq`,
		toNanos(f.Since), f.Server, f.Server, f.ItemID, f.ItemID)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, fmt.Errorf("read audit log: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
