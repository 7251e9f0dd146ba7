package review

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Usage is what one decision adds to its server's use of sampling, or, read
// back with UsageIn, the sum over a window. The engine decides the numbers;
// the store only keeps and adds them, so every serve process sharing the
// state dir sees the same totals.
type Usage struct {
	// Requests counts sampling requests the upstream sent (1 for a fresh
	// request-stage decision, 0 otherwise).
	Requests int64 `json:"requests"`
	// RequestedTokens is the maxTokens of requests let through or held.
	RequestedTokens int64 `json:"requested_tokens"`
	// ReturnedTokens is what the model returned: the result's own usage
	// when it carries one, else an estimate from its length.
	ReturnedTokens int64 `json:"returned_tokens"`
	// Tokens is the change in tokens charged against the server's budget:
	// a request reserves its maxTokens, its completion releases the part
	// the model did not use. A window's sum is never below zero.
	Tokens int64 `json:"tokens"`
}

// Entry is everything the firewall writes for one decision.
type Entry struct {
	Decision Decision
	Usage    Usage
	// Review is the item an escalation opens, nil otherwise. Commit fills in
	// what the queue owns (ID, state, times, owner) as Add does.
	Review        *Item
	ReviewTimeout time.Duration
}

// Commit writes an entry in one transaction: the review item and its
// history when there is one (opened as Add opens it, linked to a parent
// named by WithParent), and the decision, naming the item and carrying its
// usage. Either all of it is stored or none, so a budget never counts a
// request whose decision was lost, and an escalation is never queued
// without its decision. Like RecordDecision it is detached from ctx's
// cancellation. It returns the opened item (the zero Item without one).
func (s *Store) Commit(ctx context.Context, e Entry) (Item, error) {
	d := &e.Decision
	if d.ID == "" || d.Outcome == "" {
		return Item{}, fmt.Errorf("commit decision %q: id and outcome are required", d.ID)
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = s.now()
	}
	var it Item
	var due time.Time
	if e.Review != nil {
		if err := checkNew(*e.Review, e.ReviewTimeout); err != nil {
			return Item{}, fmt.Errorf("commit decision %s: review: %w", d.ID, err)
		}
		if err := s.checkDecidable(); err != nil {
			return Item{}, fmt.Errorf("commit decision %s: %w", d.ID, err)
		}
		due = time.Now().Add(e.ReviewTimeout)
		it = lineage(ctx, s.fresh(*e.Review, e.ReviewTimeout))
		it.DecisionID, d.ReviewID = d.ID, it.ID
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := s.write(ctx, func(tx *sql.Tx) error { return s.commitTx(ctx, tx, e, it) })
	if err != nil {
		return Item{}, fmt.Errorf("commit decision %s: %w", d.ID, err)
	}
	if e.Review != nil {
		s.setDue(it.ID, due)
		s.log.Info("review opened", append(itemFields(it), zap.Time("expires_at", it.ExpiresAt))...)
	}
	return it, nil
}

// commitTx is Commit's transaction body; it is the zero Item when the
// entry opens no review.
func (s *Store) commitTx(ctx context.Context, tx *sql.Tx, e Entry, it Item) error {
	if it.ID != "" {
		if err := insertItem(ctx, tx, it); err != nil {
			return err
		}
		if err := s.record(ctx, tx, it.ID, "", StatePending, "", "", it.CreatedAt); err != nil {
			return err
		}
	}
	d, u := e.Decision, e.Usage
	_, err := tx.ExecContext(ctx, `INSERT INTO decisions (id, server, stage,
		outcome, reasons, review_id, created_at, requests, requested_tokens,
		returned_tokens, tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		d.ID, d.Server, d.Stage, d.Outcome, encodeReasons(d.Reasons),
		d.ReviewID, toNanos(d.CreatedAt), u.Requests, u.RequestedTokens,
		u.ReturnedTokens, u.Tokens)
	return err
}

// UsageIn sums a server's usage over each named window ending at at, in one
// read of its decisions. Every window is in the answer, all zeros when nothing was recorded.
// A caller reading the same windows for every decision should use a
// UsageReader, which prepares the query once.
func (s *Store) UsageIn(ctx context.Context, server string, windows map[string]time.Duration, at time.Time) (map[string]Usage, error) {
	r := newUsageQuery(windows)
	return r.read(s.db.QueryRowContext(ctx, r.query, r.args(server, at)...), server)
}

// UsageReader sums usage over a fixed set of windows with a statement
// prepared once: preparing costs several times what reading a few hundred
// rows does, and the engine reads usage before every decision. It is safe
// for concurrent use.
type UsageReader struct {
	usageQuery
	stmt *sql.Stmt
}

// UsageReader prepares the read of windows. The statement lives as long as
// the Store.
func (s *Store) UsageReader(ctx context.Context, windows map[string]time.Duration) (*UsageReader, error) {
	q := newUsageQuery(windows)
	stmt, err := s.db.PrepareContext(ctx, q.query)
	if err != nil {
		return nil, fmt.Errorf("prepare usage read: %w", err)
	}
	return &UsageReader{usageQuery: q, stmt: stmt}, nil
}

// Read sums the server's usage over each window ending at at.
func (r *UsageReader) Read(ctx context.Context, server string, at time.Time) (map[string]Usage, error) {
	return r.read(r.stmt.QueryRowContext(ctx, r.args(server, at)...), server)
}

// usageQuery is one SELECT with four conditional sums per window over the
// rows of the longest one, so several windows cost one index range scan.
// A read costs about a microsecond per decision of the server in the
// longest window, on a 2-core VM.
type usageQuery struct {
	names   []string
	windows map[string]time.Duration
	query   string
}

var usageColumns = []string{"requests", "requested_tokens", "returned_tokens", "tokens"}

func newUsageQuery(windows map[string]time.Duration) usageQuery {
	q := usageQuery{names: slices.Sorted(maps.Keys(windows)), windows: maps.Clone(windows)}
	// An aggregate makes exactly one row, even with no windows and no rows.
	cols := []string{"COUNT(*)"}
	for range q.names {
		for _, col := range usageColumns {
			cols = append(cols, fmt.Sprintf("COALESCE(SUM(CASE WHEN created_at >= ? THEN %s END), 0)", col))
		}
	}
	q.query = "SELECT " + strings.Join(cols, ", ") + " FROM decisions WHERE server = ? AND created_at >= ?"
	return q
}

// args are the query's arguments for server at time at: each window's
// start once per column, then the server and the oldest start.
func (q usageQuery) args(server string, at time.Time) []any {
	args := make([]any, 0, len(q.names)*len(usageColumns)+2)
	oldest := at
	for _, name := range q.names {
		since := at.Add(-q.windows[name])
		if since.Before(oldest) {
			oldest = since
		}
		for range usageColumns {
			args = append(args, since.UnixNano())
		}
	}
	return append(args, server, oldest.UnixNano())
}

// read scans one row of sums into a Usage per window.
func (q usageQuery) read(row *sql.Row, server string) (map[string]Usage, error) {
	sums := make([]int64, 1+len(usageColumns)*len(q.names))
	dest := make([]any, len(sums))
	for i := range sums {
		dest[i] = &sums[i]
	}
	if err := row.Scan(dest...); err != nil {
		return nil, fmt.Errorf("usage of %s: %w", server, err)
	}
	out := make(map[string]Usage, len(q.names))
	for i, name := range q.names {
		u := sums[1+4*i : 5+4*i]
		out[name] = Usage{Requests: u[0], RequestedTokens: u[1], ReturnedTokens: u[2], Tokens: max(u[3], 0)}
	}
	return out, nil
}
