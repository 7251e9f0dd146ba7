package review

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
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
// it is. Once a trimShare of KeepInputsBytes was written since the last
// trim, it then deletes the oldest inputs past that bound (trimInputs),
// outside the transaction that wrote ins.
func (s *Store) WriteInputs(ctx context.Context, ins []KeptInput) error {
	if len(ins) > KeepInputsBatch {
		return fmt.Errorf("keep %d inputs: at most %d at once", len(ins), KeepInputsBatch)
	}
	if len(ins) == 0 {
		return nil
	}
	if err := s.insertInputsTx(ctx, ins); err != nil {
		return err
	}
	s.trimWhenDue(ctx, ins)
	return nil
}

// insertInputsTx inserts ins in a transaction of their own.
func (s *Store) insertInputsTx(ctx context.Context, ins []KeptInput) error {
	return s.writeApart(ctx, func(tx *writeTx) error {
		if err := s.insertInputs(ctx, tx, ins); err != nil {
			return fmt.Errorf("keep %d inputs: %w", len(ins), err)
		}
		return nil
	})
}

// trimShare is how much of KeepInputsBytes a Store writes between two
// trims, as a fraction: the kept inputs overshoot the bound by at most
// that (per Store writing them), and the sum that finds what they take
// runs once per that many bytes written, not once per batch.
const trimShare = 16

// keptRowOverhead is what a kept input's row counts toward
// KeepInputsBytes besides its document (ids, codes, times), so that
// decisions without one are bounded too.
const keptRowOverhead = 256

// trimWhenDue trims the kept inputs once the inputs written since the
// last trim, ins among them, come to a trimShare of KeepInputsBytes. The
// inputs are written whatever the trim does: one that fails is logged,
// and the next is due at once.
func (s *Store) trimWhenDue(ctx context.Context, ins []KeptInput) {
	if s.KeepInputsBytes <= 0 {
		return
	}
	var n int64
	for i := range ins {
		n += int64(len(ins[i].Input)) + keptRowOverhead
	}
	if s.untrimmed.Add(n) < s.KeepInputsBytes/trimShare {
		return
	}
	s.untrimmed.Store(0)
	if _, err := s.trimInputs(ctx, s.KeepInputsBytes); err != nil {
		s.untrimmed.Store(s.KeepInputsBytes) // due again with the next write
		s.log.Warn("bound the policy inputs kept for replay", zap.Int64("max_bytes", s.KeepInputsBytes), zap.Error(err))
	}
}

// insertInputs inserts ins in tx, as few multi-row INSERTs as their
// count's binary digits: each a prepared statement of a power of two
// rows, so the database parses at most nine texts, once each.
func (s *Store) insertInputs(ctx context.Context, tx *writeTx, ins []KeptInput) error {
	for len(ins) > 0 {
		n := 1 << (bits.Len(uint(len(ins))) - 1) // the largest power of two <= len(ins)
		stmt, err := s.inputStmts.stmt(ctx, s.db, insertInputsSQL(n))
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

// insertInputsSQL inserts rows kept inputs, leaving an input whose
// decision already has one as it is.
func insertInputsSQL(rows int) string {
	return `INSERT INTO decision_inputs (decision_id, server, kind, stage, revision,
		outcome, reasons, await_answer, input, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)` +
		strings.Repeat(",(?,?,?,?,?,?,?,?,?,?)", rows-1) + ` ON CONFLICT (decision_id) DO NOTHING`
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

// trimInputs deletes kept inputs until what they take (their documents'
// bytes, and keptRowOverhead a row) is at most max, whatever their age;
// max 0 bounds nothing. It deletes from the server whose inputs take the
// most, its oldest first, down to what the next takes, and chooses again:
// one upstream's flood displaces its own traffic first, and a server whose
// inputs take less than an equal share of max (max over the servers that
// have any) loses none of them to another's. One scan finds what each
// server's inputs take; the rest reads only the rows it deletes (the
// index by server and time), so a trim costs a scan and what it deletes,
// however small the inputs. It returns how many it deleted. Trims run one
// at a time in a Store; replicas trimming at once may together delete up
// to twice the excess.
func (r *retention) trimInputs(ctx context.Context, max int64) (int, error) {
	if max <= 0 {
		return 0, nil
	}
	r.trimMu.Lock()
	defer r.trimMu.Unlock()
	sizes, total, err := r.inputSizes(ctx)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for total > max && len(sizes) > 0 {
		server, cut := nextCut(sizes, total-max)
		ids, freed, err := r.oldestInputs(ctx, server, cut)
		if err != nil {
			return deleted, err
		}
		if len(ids) == 0 { // deleted meanwhile, by another replica's trim
			total -= sizes[server]
			delete(sizes, server)
			continue
		}
		var n int64
		err = r.execOneResult(ctx, func(res sql.Result) { n, _ = res.RowsAffected() },
			`DELETE FROM decision_inputs WHERE decision_id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, ids...)
		if err != nil {
			return deleted, fmt.Errorf("trim kept inputs: %w", err)
		}
		deleted, total, sizes[server] = deleted+int(n), total-freed, sizes[server]-freed
		r.trimmed.Add(uint64(n))
	}
	if deleted > 0 {
		r.log.Info("oldest policy inputs kept for replay deleted: they took more than replay.max_bytes",
			zap.Int("decisions", deleted), zap.Int64("max_bytes", max))
	}
	return deleted, nil
}

// InputsTrimmed is how many kept inputs this Store deleted since it
// opened because they took more than KeepInputsBytes.
func (r *retention) InputsTrimmed() uint64 { return r.trimmed.Load() }

// inputSizes is what each server's kept inputs take, and all of them.
func (r *retention) inputSizes(ctx context.Context) (map[string]int64, int64, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT server, SUM(COALESCE(LENGTH(input), 0) + ?) FROM decision_inputs GROUP BY server`,
		keptRowOverhead)
	if err != nil {
		return nil, 0, fmt.Errorf("size of kept inputs: %w", err)
	}
	defer rows.Close()
	sizes, total := map[string]int64{}, int64(0)
	for rows.Next() {
		var server string
		var size int64
		if err := rows.Scan(&server, &size); err != nil {
			return nil, 0, fmt.Errorf("size of kept inputs: %w", err)
		}
		sizes[server], total = size, total+size
	}
	return sizes, total, rows.Err()
}

// nextCut is the server whose inputs take the most in sizes (of equals,
// the first by name) and how much of it to delete next, of excess in
// all: down to what the next server takes, and at least an equal share
// of the excess (a row's worth at the least), so servers of one size
// give it in turns a few rows at a time.
func nextCut(sizes map[string]int64, excess int64) (server string, cut int64) {
	var top, next int64
	found := false
	for s, size := range sizes {
		if !found || size > top || size == top && s < server {
			if found {
				next = max(next, top)
			}
			server, top, found = s, size, true
		} else {
			next = max(next, size)
		}
	}
	share := max(excess/int64(len(sizes)), keptRowOverhead)
	return server, min(excess, max(top-next, share))
}

// oldestInputs are the ids of server's oldest kept inputs that together
// take at least need (at most pruneBatch of them), and what they take.
func (r *retention) oldestInputs(ctx context.Context, server string, need int64) ([]any, int64, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT decision_id, COALESCE(LENGTH(input), 0) + ? FROM decision_inputs
		WHERE server = ? ORDER BY created_at, decision_id LIMIT ?`, keptRowOverhead, server, pruneBatch)
	if err != nil {
		return nil, 0, fmt.Errorf("oldest kept inputs of %s: %w", server, err)
	}
	defer rows.Close()
	var ids []any
	var freed int64
	for freed < need && rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, 0, fmt.Errorf("oldest kept inputs of %s: %w", server, err)
		}
		ids, freed = append(ids, id), freed+n
	}
	return ids, freed, rows.Err()
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
