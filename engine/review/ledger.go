package review

import (
	"context"
	"database/sql"
	"sync"

	"github.com/mcpx-fw/mcpx-fw/engine/review/internal/turn"
)

// ledger is the decisions table and the usage the database sums from it:
// it records decisions, each with its charge, in its server's turn
// (Commit, Charge), and reads usage back. It touches the decisions and
// usage tables; what an entry opens in the queue is the queue's, reached
// through opening, openItem and opened.
type ledger struct {
	*storage

	// insert is insertDecision, prepared on first use (insertStmt).
	insertMu sync.Mutex
	insert   *sql.Stmt
	// stmts are the other statements of a decision's write (the
	// settlement's), prepared on first use.
	stmts prepared

	// serverLocks queues this Store's charges to one server (charge.go).
	serverLocks turn.Turns

	// opening checks an entry and makes the item it opens, before anything
	// is written; openItem writes that item inside the entry's write, with
	// its history and audit entry; opened announces it once committed.
	opening  func(context.Context, Entry) (pendingEntry, error)
	openItem func(context.Context, *writeTx, Item) error
	opened   func(pendingEntry)
}

// closeInsert closes the prepared insert, at Close.
func (l *ledger) closeInsert() {
	l.insertMu.Lock()
	defer l.insertMu.Unlock()
	if l.insert != nil {
		l.insert.Close()
		l.insert = nil
	}
	l.stmts.close()
}

// insertStmt is insertDecision, prepared once and reused for every
// decision: preparing the insert also compiles the usage trigger
// (migration 4), which costs more than running both. A failed prepare is
// not kept: the next decision tries again.
func (l *ledger) insertStmt(ctx context.Context) (*sql.Stmt, error) {
	l.insertMu.Lock()
	defer l.insertMu.Unlock()
	if l.insert != nil {
		return l.insert, nil
	}
	stmt, err := l.db.PrepareContext(ctx, insertDecision)
	if err != nil {
		return nil, err
	}
	l.insert = stmt
	return stmt, nil
}
