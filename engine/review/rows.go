package review

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// itemColumns is the column list every item query selects, in scanItem's
// order.
const itemColumns = `id, parent, decision_id, server, label, stage, era, state,
	created_at, expires_at, reasons, request, result, context, owner,
	decided_by, decided_at, note, finished_at, finish_note, edited, edit_diff,
	answer, erased_at, waived`

// querier is what reads need: the database or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type scanner interface{ Scan(dest ...any) error }

// scanItem reads one row of itemColumns.
func scanItem(r scanner) (Item, error) {
	var it Item
	var created, expires, decided, finished, erased int64
	var reasons, waived string
	var request, result, context, edited, answer []byte
	err := r.Scan(&it.ID, &it.Parent, &it.DecisionID, &it.Server, &it.Label,
		&it.Stage, &it.Era, &it.State, &created, &expires, &reasons,
		&request, &result, &context, &it.Owner, &it.DecidedBy, &decided,
		&it.Note, &finished, &it.FinishNote, &edited, &it.EditDiff, &answer, &erased, &waived)
	if err != nil {
		return Item{}, err
	}
	it.CreatedAt, it.ExpiresAt = fromNanos(created), fromNanos(expires)
	it.DecidedAt, it.FinishedAt, it.ErasedAt = fromNanos(decided), fromNanos(finished), fromNanos(erased)
	it.Request, it.Result, it.Context = rawJSON(request), rawJSON(result), rawJSON(context)
	it.Edited, it.Answer = rawJSON(edited), rawJSON(answer)
	if err := json.Unmarshal([]byte(reasons), &it.Reasons); err != nil {
		return Item{}, fmt.Errorf("item %s: reasons: %w", it.ID, err)
	}
	if err := json.Unmarshal([]byte(waived), &it.Waived); err != nil {
		return Item{}, fmt.Errorf("item %s: waived: %w", it.ID, err)
	}
	if len(it.Waived) == 0 {
		it.Waived = nil
	}
	return it, nil
}

// load reads one item; ErrNotFound if there is none.
func load(ctx context.Context, q querier, id string) (Item, error) {
	row := q.QueryRowContext(ctx, "SELECT "+itemColumns+" FROM items WHERE id = ?", id)
	it, err := scanItem(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Item{}, fmt.Errorf("review %s: %w", id, ErrNotFound)
	}
	return it, err
}

// toNanos stores a time; the zero time is stored as 0 ("unset").
func toNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// now is the store's clock reading, in the precision and zone it stores,
// so values returned by a write equal the values read back later. Round(0)
// drops the monotonic reading: what is stored is wall-clock time.
func now() time.Time {
	return time.Now().UTC().Round(0)
}

// now is this Store's wall-clock reading: now(), or s.clock's when a test
// set one to make the wall clock jump. Deadlines this process waits for
// are also kept on the monotonic clock (see Wait), which no jump moves.
func (s *storage) now() time.Time {
	if s.clock != nil {
		return s.clock().UTC().Round(0)
	}
	return now()
}

// rawJSON keeps an empty column as a nil RawMessage, so JSON output omits it.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// blob stores a nil or empty payload as NULL.
func blob(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return []byte(m)
}

// encodeReasons stores reasons as a JSON array; nil becomes [] so the CLI's
// JSON never prints null.
func encodeReasons(rs []Reason) string {
	if rs == nil {
		rs = []Reason{}
	}
	b, _ := json.Marshal(rs) // cannot fail: strings only
	return string(b)
}
