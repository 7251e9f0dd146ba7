package review

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
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
	// Tokens is what is charged against the server's budget: a request
	// reserves what its prompt is estimated at plus its maxTokens, and its
	// completion settles that, on the request's own decision (Settlement),
	// to the prompt plus what the model returned. A window's sum is never
	// below zero.
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
	// Settles, when not nil, changes the charge the request's first
	// decision holds, in the same transaction (settlement.go). An entry
	// that settles is written as one that charges: in its server's turn.
	Settles *Settlement
}

// charges reports whether e may change its server's usage.
func (e Entry) charges() bool { return e.Usage != (Usage{}) || e.Settles != nil }

// Commit writes an entry in one transaction: the review item and its
// history when there is one (opened as Add opens it, linked to a parent
// named by WithParent), and the decision, naming the item and carrying its
// usage. Either all of it is stored or none, so a budget never counts a
// request whose decision was lost, and an escalation is never queued
// without its decision. Like RecordDecision it is detached from ctx's
// cancellation. It returns the opened item (the zero Item without one).
// A decision made on the server's usage is committed with Charge instead,
// which reads that usage in the same step.
func (l *ledger) Commit(ctx context.Context, e Entry) (Item, error) {
	p, err := l.opening(ctx, e)
	if err != nil {
		return Item{}, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := l.commitCharged(ctx, p); err != nil {
		return Item{}, err
	}
	l.opened(p)
	return p.item, nil
}

// pendingEntry is an entry ready to be written: the item it opens (the
// zero Item when it opens none) and when that item's wait ends on this
// process's monotonic clock.
type pendingEntry struct {
	entry Entry
	item  Item
	due   time.Time
}

// opening checks e and makes the item it opens, before anything is
// written.
func (s *Store) opening(ctx context.Context, e Entry) (pendingEntry, error) {
	d := &e.Decision
	if d.ID == "" || d.Outcome == "" {
		return pendingEntry{}, fmt.Errorf("commit decision %q: id and outcome are required", d.ID)
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = s.now()
	}
	if e.Review == nil {
		return pendingEntry{entry: e}, nil
	}
	if err := checkNew(*e.Review, e.ReviewTimeout); err != nil {
		return pendingEntry{}, fmt.Errorf("commit decision %s: review: %w", d.ID, err)
	}
	if err := s.checkDecidable(); err != nil {
		return pendingEntry{}, fmt.Errorf("commit decision %s: %w", d.ID, err)
	}
	due := time.Now().Add(e.ReviewTimeout)
	it := lineage(ctx, s.fresh(*e.Review, e.ReviewTimeout))
	it.DecisionID, d.ReviewID = d.ID, it.ID
	return pendingEntry{entry: e, item: it, due: due}, nil
}

// failed names the decision a failed write was for.
func (p pendingEntry) failed(err error) error {
	return fmt.Errorf("commit decision %s: %w", p.entry.Decision.ID, err)
}

// commitCharged writes p. An entry that charges usage is written in its
// server's turn (see Charge): on PostgreSQL inside the server's advisory
// lock, after this Store's other charges to the server. On SQLite the
// write needs no turn: every charge there that was decided on usage reads
// it again inside its own write transaction, under the file's write lock,
// and so sees this one whenever it lands.
func (l *ledger) commitCharged(ctx context.Context, p pendingEntry) error {
	if !p.entry.charges() || l.db.dialect != dialectPostgres {
		if err := l.commitWrite(ctx, p.entry, p.item); err != nil {
			return p.failed(err)
		}
		return nil
	}
	server := p.entry.Decision.Server
	unlock, err := l.serverLocks.Take(ctx, server)
	if err != nil {
		return p.failed(err)
	}
	defer unlock()
	_, err = l.chargeLocked(ctx, server, nil, func(map[string]Usage) (pendingEntry, error) { return p, nil })
	return err
}

// commitWrite stores the entry atomically, with opened, the item it opens
// (the zero Item when it opens none). A decision alone is one INSERT,
// which SQLite runs as a transaction of its own with the usage trigger
// inside it, so it needs no BEGIN and COMMIT around it: two fewer calls
// into the driver for nearly every decision. An entry that opens a review
// writes its item, history and decision in one transaction.
func (l *ledger) commitWrite(ctx context.Context, e Entry, opened Item) error {
	insert, err := l.insertStmt(ctx)
	if err != nil {
		return l.storageError(err, 0)
	}
	if opened.ID == "" && e.Settles == nil {
		return l.writeOne(ctx, insert, decisionArgs(e.Decision, e.Usage))
	}
	return l.write(ctx, func(tx *writeTx) error {
		return l.insertEntry(ctx, tx, e, opened, insert)
	})
}

// insertEntry writes the entry inside tx: the item it opens, with its
// first history row and audit entry, its settlement, then the decision and
// its usage.
func (l *ledger) insertEntry(ctx context.Context, tx *writeTx, e Entry, opened Item, insert *sql.Stmt) error {
	if opened.ID != "" {
		if err := l.openItem(ctx, tx, opened); err != nil {
			return err
		}
	}
	u, err := l.applySettlement(ctx, tx, e)
	if err != nil {
		return err
	}
	_, err = tx.StmtContext(ctx, insert).ExecContext(ctx, decisionArgs(e.Decision, u)...)
	return err
}

// insertDecision stores a decision with its usage; the database adds the
// usage to the server's buckets in the same statement (migration 4).
const insertDecision = `INSERT INTO decisions (` + decisionColumns + `) VALUES (?,?,?,?,?,?,?,?,?,?,?)`

// decisionColumns are the columns a decision is inserted with, in
// decisionArgs' order.
const decisionColumns = `id, server, stage, outcome, reasons, review_id,
	created_at, requests, requested_tokens, returned_tokens, tokens`

// decisionArgs are insertDecision's arguments.
func decisionArgs(d Decision, u Usage) []any {
	return []any{d.ID, d.Server, d.Stage, d.Outcome, encodeReasons(d.Reasons),
		d.ReviewID, toNanos(d.CreatedAt), u.Requests, u.RequestedTokens,
		u.ReturnedTokens, u.Tokens}
}

// UsageIn sums a server's usage over each named window ending at at, in one
// read. Every window is in the answer, all zeros when nothing was recorded.
// A caller reading the same windows for every decision should use a
// UsageReader, which prepares the query once.
func (l *ledger) UsageIn(ctx context.Context, server string, windows map[string]time.Duration, at time.Time) (map[string]Usage, error) {
	q := newUsageQuery(windows)
	return q.read(l.db.QueryRowContext(ctx, q.query, q.args(server, at)...), server)
}

// UsageReader sums usage over a fixed set of windows with a statement
// prepared once: preparing the read costs more than running it, and the
// engine reads usage before every decision. It is safe for concurrent use.
type UsageReader struct {
	usageQuery
	stmt   *sql.Stmt
	ledger *ledger

	// unchanged is Charge's conditional insert on SQLite, prepared on
	// first use (charge.go).
	unchangedMu sync.Mutex
	unchanged   *sql.Stmt
}

// UsageReader prepares the read of windows. The statement lives as long as
// the Store.
func (l *ledger) UsageReader(ctx context.Context, windows map[string]time.Duration) (*UsageReader, error) {
	q := newUsageQuery(windows)
	stmt, err := l.db.PrepareContext(ctx, q.query)
	if err != nil {
		return nil, fmt.Errorf("prepare usage read: %w", err)
	}
	return &UsageReader{usageQuery: q, stmt: stmt, ledger: l}, nil
}

// Read sums the server's usage over each window ending at at.
func (r *UsageReader) Read(ctx context.Context, server string, at time.Time) (map[string]Usage, error) {
	args := r.args(server, at)
	row := r.ledger.db.readRow(ctx, r.query, func() *sql.Row { return r.stmt.QueryRowContext(ctx, args...) })
	return r.read(row, server)
}

// usageQuery is one SELECT that sums each window from the usage buckets
// and the few decisions at its start edge (usage_buckets.go), so a read
// costs about the same however many decisions the windows hold.
type usageQuery struct {
	names   []string
	windows map[string]time.Duration
	query   string
}

func newUsageQuery(windows map[string]time.Duration) usageQuery {
	q := usageQuery{names: slices.Sorted(maps.Keys(windows)), windows: maps.Clone(windows)}
	q.query = usageSQL(len(q.names))
	return q
}

// args are the query's arguments for server at time at: the server and
// the bounds of each part of each window, in usageSQL's order.
func (q usageQuery) args(server string, at time.Time) []any {
	args := make([]any, 0, 3*len(q.names)*(len(bucketWidths)+1))
	for _, name := range q.names {
		for _, p := range windowParts(at.Add(-q.windows[name]).UnixNano()) {
			args = append(args, server, p.from, p.to)
		}
	}
	return args
}

// read scans the row of sums: a placeholder, then four per window.
func (q usageQuery) read(row *sql.Row, server string) (map[string]Usage, error) {
	sums, err := q.scan(row, server)
	if err != nil {
		return nil, err
	}
	return q.usage(sums), nil
}

// scan reads the row of sums as the query returns it.
func (q usageQuery) scan(row *sql.Row, server string) ([]int64, error) {
	sums := make([]int64, 1+4*len(q.names))
	dest := make([]any, len(sums))
	for i := range sums {
		dest[i] = &sums[i]
	}
	if err := row.Scan(dest...); err != nil {
		return nil, fmt.Errorf("usage of %s: %w", server, err)
	}
	return sums, nil
}

// usage is each window's Usage from the row of sums.
func (q usageQuery) usage(sums []int64) map[string]Usage {
	out := make(map[string]Usage, len(q.names))
	for i, name := range q.names {
		u := sums[1+4*i : 5+4*i]
		// A window never reports fewer than zero tokens: a completion
		// whose request fell out of the window leaves a negative charge.
		out[name] = Usage{Requests: u[0], RequestedTokens: u[1], ReturnedTokens: u[2], Tokens: max(u[3], 0)}
	}
	return out
}
