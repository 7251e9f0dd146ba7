package review

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// KeptInput is what the policy saw for one decision, kept so that
// `mcpx-fw policy replay` can decide it again with another policy: the
// input document exactly as evaluated (unmasked: it holds prompt and form
// text), with what the decision was. The engine writes it after its
// decision, in batches (WriteInputs), and Prune deletes it when it is
// older than the store's KeepInputs.
type KeptInput struct {
	DecisionID string
	Server     string
	Kind       string
	Stage      string
	// Revision is the policy revision that evaluated Input.
	Revision string
	// Outcome and Reasons (codes) are what the policy reached, before the
	// store opened any review.
	Outcome string
	Reasons []string
	// AwaitAnswer marks a request whose pass becomes a review for an
	// operator's answer (the engine's Request.AwaitAnswer).
	AwaitAnswer bool
	// Input is the policy's input document as JSON; nil when the decision
	// was made before the policy ran (a validation blocker, usage that
	// could not be read): there is nothing to replay.
	Input json.RawMessage
	// CreatedAt is the decision's time: Prune's age of the input.
	CreatedAt time.Time
}

// KeepInputsBatch is the most inputs WriteInputs takes at once: one
// statement of 10 columns a row stays far below either backend's limit
// on bound values (SQLite's 32766, PostgreSQL's 65535).
const KeepInputsBatch = 256

// WriteInputs keeps ins (at most KeepInputsBatch), each at its
// CreatedAt, in one transaction of its own, none of them a decision's.
// It takes no store-wide lock on PostgreSQL: it touches neither the queue
// nor the audit chain. An input whose decision already has one is left as
// it is.
func (s *Store) WriteInputs(ctx context.Context, ins []KeptInput) error {
	if len(ins) > KeepInputsBatch {
		return fmt.Errorf("keep %d inputs: at most %d at once", len(ins), KeepInputsBatch)
	}
	if len(ins) == 0 {
		return nil
	}
	start := time.Now()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	sqlTx, err := s.begin(ctx)
	if err != nil {
		return s.storageError(err, time.Since(start))
	}
	tx := &writeTx{Tx: sqlTx, binder: s.db.binder}
	if err := s.insertInputs(ctx, tx, ins); err != nil {
		return s.storageError(errors.Join(fmt.Errorf("keep %d inputs: %w", len(ins), err), ignoreDone(tx.Rollback())), 0)
	}
	return s.commit(tx)
}

// insertInputs inserts ins in tx, as few multi-row INSERTs as their
// count's binary digits: each a prepared statement of a power of two
// rows, so the database parses at most nine texts, once each.
func (s *Store) insertInputs(ctx context.Context, tx *writeTx, ins []KeptInput) error {
	for len(ins) > 0 {
		n := 1 << (bits.Len(uint(len(ins))) - 1) // the largest power of two <= len(ins)
		stmt, err := s.inputStmts.prepared(ctx, s.db, n)
		if err != nil {
			return err
		}
		args := make([]any, 0, 10*n)
		for i := range ins[:n] {
			row, err := inputArgs(&ins[i])
			if err != nil {
				return fmt.Errorf("input of %s: %w", ins[i].DecisionID, err)
			}
			args = append(args, row...)
		}
		if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, args...); err != nil {
			return err
		}
		ins = ins[n:]
	}
	return nil
}

// inputStmts are insertInputs' statements by row count, prepared on
// first use; a failed prepare is not kept.
type inputStmts struct {
	mu sync.Mutex
	by map[int]*sql.Stmt
}

func (p *inputStmts) prepared(ctx context.Context, d *db, rows int) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.by[rows]; st != nil {
		return st, nil
	}
	st, err := d.PrepareContext(ctx, `INSERT INTO decision_inputs (decision_id, server, kind, stage, revision,
		outcome, reasons, await_answer, input, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)`+
		strings.Repeat(",(?,?,?,?,?,?,?,?,?,?)", rows-1)+` ON CONFLICT (decision_id) DO NOTHING`)
	if err != nil {
		return nil, err
	}
	if p.by == nil {
		p.by = map[int]*sql.Stmt{}
	}
	p.by[rows] = st
	return st, nil
}

// inputArgs is in as one row's values.
func inputArgs(in *KeptInput) ([]any, error) {
	codes, err := json.Marshal(nonNil(in.Reasons))
	if err != nil {
		return nil, err
	}
	var input any // NULL when there is no document
	if in.Input != nil {
		input = []byte(in.Input)
	}
	return []any{in.DecisionID, in.Server, in.Kind, in.Stage, in.Revision, in.Outcome, string(codes),
		boolInt(in.AwaitAnswer), input, toNanos(in.CreatedAt)}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// pruneInputs deletes the kept inputs older than keep (every one when keep
// is 0: keeping is off), a batch per transaction, and returns how many.
func (r *retention) pruneInputs(ctx context.Context, keep time.Duration) (int, error) {
	cutoff := r.now().Add(-max(keep, 0))
	total := 0
	for {
		var n int64
		err := r.execOneResult(ctx, func(res sql.Result) { n, _ = res.RowsAffected() },
			`DELETE FROM decision_inputs WHERE decision_id IN (SELECT decision_id FROM decision_inputs
			WHERE created_at <= ? ORDER BY created_at LIMIT ?)`, toNanos(cutoff), pruneBatch)
		total += int(n)
		if err != nil {
			return total, fmt.Errorf("prune kept inputs: %w", err)
		}
		if n < pruneBatch {
			break
		}
	}
	if total > 0 {
		r.log.Info("kept policy inputs deleted", zap.Int("decisions", total), zap.Duration("keep", keep))
	}
	return total, nil
}

// Replayed is one recorded decision as replay reads it: the decision, and
// its kept input when there is one (Kept false: none was kept).
type Replayed struct {
	Decision Decision
	Kept     bool
	Input    KeptInput
}

// ReplayFilter selects the decisions Replay reads: made at or after Since,
// of Server when it is not "".
type ReplayFilter struct {
	Since  time.Time
	Server string
}

// Replay calls fn for each decision f selects, oldest first, with its kept
// input where one was kept. It only reads.
func (s *Store) Replay(ctx context.Context, f ReplayFilter, fn func(Replayed) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT d.id, d.server, d.stage, d.outcome, d.created_at,
		CASE WHEN i.decision_id IS NULL THEN 0 ELSE 1 END, COALESCE(i.kind, ''), COALESCE(i.revision, ''),
		COALESCE(i.outcome, ''), COALESCE(i.reasons, '[]'), COALESCE(i.await_answer, 0), i.input
		FROM decisions d LEFT JOIN decision_inputs i ON i.decision_id = d.id
		WHERE d.created_at >= ? AND (? = '' OR d.server = ?)
		ORDER BY d.created_at, d.id`, toNanos(f.Since), f.Server, f.Server)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanReplayed(rows)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

func scanReplayed(rows *sql.Rows) (Replayed, error) {
	var r Replayed
	var created, kept, await int64
	var reasons string
	var input []byte
	d, in := &r.Decision, &r.Input
	if err := rows.Scan(&d.ID, &d.Server, &d.Stage, &d.Outcome, &created, &kept, &in.Kind, &in.Revision,
		&in.Outcome, &reasons, &await, &input); err != nil {
		return r, err
	}
	d.CreatedAt = fromNanos(created)
	r.Kept = kept == 1
	in.DecisionID, in.Server, in.Stage, in.CreatedAt = d.ID, d.Server, d.Stage, d.CreatedAt
	in.AwaitAnswer = await == 1
	if input != nil {
		in.Input = json.RawMessage(input)
	}
	return r, json.Unmarshal([]byte(reasons), &in.Reasons)
}
