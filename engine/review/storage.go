package review

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"
	"modernc.org/sqlite"
)

// storage is what every part of a Store shares: the database, the one
// write lock this Store's goroutines queue on, the wall clock and the log.
// Its methods run one write or read and name its failures; they know
// nothing of items, leases, waiters or the audit chain.
type storage struct {
	db *db
	// path is the SQLite file, or the PostgreSQL URL without its password:
	// what error messages and `mcpx-fw check` name.
	path string
	log  *zap.Logger

	// clock is the wall clock, nil for time.Now: a field so tests can make
	// it jump, as an NTP step or an operator's date command would.
	clock func() time.Time

	// wmu serialises this Store's write transactions, so goroutines of one
	// process queue here instead of spinning in SQLite's busy handler.
	wmu sync.Mutex
}

// write runs fn in one IMMEDIATE transaction (on PostgreSQL: one that
// holds the store-wide write lock, see lockWrites) and commits it when fn
// returns nil. Outcomes that must still commit (an expiry applied before a
// refused approval) are reported through fn's closure, not its error.
// Storage failures come back named (see storageError).
func (s *storage) write(ctx context.Context, fn func(tx *writeTx) error) error {
	return s.transact(ctx, true, fn)
}

// writeApart is write without the store-wide lock on PostgreSQL, for a
// transaction that touches neither the queue nor the audit chain (the
// inputs kept for replay).
func (s *storage) writeApart(ctx context.Context, fn func(tx *writeTx) error) error {
	return s.transact(ctx, false, fn)
}

// transact is write, taking the store-wide lock when storeWide.
func (s *storage) transact(ctx context.Context, storeWide bool, fn func(tx *writeTx) error) error {
	start := time.Now()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	sqlTx, err := s.begin(ctx)
	if err != nil {
		return s.storageError(err, time.Since(start))
	}
	tx := &writeTx{Tx: sqlTx, binder: s.db.binder}
	if storeWide {
		if err := s.lockWrites(ctx, tx); err != nil {
			return s.storageError(errors.Join(err, ignoreDone(tx.Rollback())), time.Since(start))
		}
	}
	if err := fn(tx); err != nil {
		return s.storageError(errors.Join(err, ignoreDone(tx.Rollback())), 0)
	}
	return s.commit(tx)
}

// writeOne runs one prepared statement as its own transaction. Like
// write, it queues behind this Store's other writes; it names its
// failures as a COMMIT's (committed), since the statement is its own
// commit. Waiting for another process's write lock happens inside the
// statement, so all of its time counts as waited.
func (s *storage) writeOne(ctx context.Context, stmt *sql.Stmt, args []any) error {
	start := time.Now()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := stmt.ExecContext(ctx, args...)
	return s.committed(err, time.Since(start))
}

// execOne runs one statement as its own transaction, queued behind this
// Store's other writes, with storage failures named (see writeOne). It
// takes no store-wide lock on PostgreSQL: continuations touch neither the
// audit chain nor the queue.
func (s *storage) execOne(ctx context.Context, q string, args ...any) error {
	return s.execOneResult(ctx, nil, q, args...)
}

func (s *storage) execOneResult(ctx context.Context, fn func(sql.Result), q string, args ...any) error {
	start := time.Now()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	r, err := s.db.ExecContext(ctx, q, args...)
	if err == nil && fn != nil {
		fn(r)
	}
	return s.committed(err, time.Since(start))
}

// commit commits tx (see committed).
func (s *storage) commit(tx *writeTx) error {
	return s.committed(tx.Commit(), 0)
}

// committed names the failure of a write that commits as it ends: a
// COMMIT, or a statement run on its own, which PostgreSQL commits when it
// ends. One whose connection was lost after it was sent may or may not
// have taken effect: it is reported as ErrOutcomeUnknown, logged, and
// never retried. Other failures are named by storageError (waited is its).
func (s *storage) committed(err error, waited time.Duration) error {
	if s.ambiguousCommit(err) {
		s.log.Error("review store lost its connection during COMMIT: whether the write took effect is unknown; it is not retried",
			zap.String("backend", s.Backend()), zap.String("store", s.path), zap.Error(err))
		return fmt.Errorf("review store %s (%s): %w: %w", s.path, s.Backend(), ErrOutcomeUnknown, s.unavailable("commit", err))
	}
	return s.storageError(err, waited)
}

// ambiguousCommit reports a commit (see committed) that failed because the
// connection to the PostgreSQL server was lost after it was sent: the
// server may have committed. One that pgx never sent (SafeToRetry) was
// not committed.
func (s *storage) ambiguousCommit(err error) bool {
	return err != nil && s.db.dialect == dialectPostgres && connectionLost(err) && !pgconn.SafeToRetry(err)
}

// SQLite's primary result codes for the failures an operator can act on.
const (
	sqliteReadOnly = 8  // SQLITE_READONLY
	sqliteIOErr    = 10 // SQLITE_IOERR: a write failed (disk full, file size limit, I/O error)
	sqliteFull     = 13 // SQLITE_FULL
	sqliteBusy     = 5  // SQLITE_BUSY: another connection holds the write lock
)

// storageError names a write that failed for a reason outside the queue,
// in words that say what to look at: "disk I/O error (778)" alone does not.
// waited is how long the write waited for the write lock (0 once it had
// it): giving up on the lock shows as SQLITE_BUSY or, when the caller's
// deadline came first, as that deadline. Other errors pass unchanged.
func (s *storage) storageError(err error, waited time.Duration) error {
	if err == nil {
		return nil
	}
	if s.db.dialect == dialectPostgres && unreachable(err) {
		return s.unavailable("write", err)
	}
	var se *sqlite.Error
	code := 0
	if errors.As(err, &se) {
		code = se.Code() & 0xff // the primary code of an extended one
	}
	switch {
	case code == sqliteBusy || waited > 0 && errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("review store %s is locked: another process held its write lock for %s (database is locked): %w",
			s.path, waited.Round(time.Millisecond), err)
	case code == sqliteIOErr || code == sqliteFull:
		return fmt.Errorf("review store %s could not be written (disk full, file size limit or I/O error): %w", s.path, err)
	case code == sqliteReadOnly:
		return fmt.Errorf("review store %s is read-only: %w", s.path, err)
	}
	return err
}

// checkDecidable refuses to open a review that no operator could decide:
// the queue's files are no longer readable and writable by this account
// (the state dir was made read-only), so `mcpx-fw review approve` could
// not open them, and the review would only sit out its timeout. This
// process keeps writing through the files it already has open, so the
// refusal itself is recorded.
func (s *storage) checkDecidable() error {
	if s.db.dialect != dialectSQLite {
		return nil // a server: whether an operator can reach it is `mcpx-fw check`'s question
	}
	dir := filepath.Dir(s.path)
	for _, p := range []string{s.path, s.path + "-wal", s.path + "-shm"} {
		err := accessRW(p)
		if p != s.path && errors.Is(err, fs.ErrNotExist) {
			err = accessRW(dir) // SQLite creates it when the next process opens the queue
			p = dir
		}
		if err != nil {
			return fmt.Errorf("review store %s is not writable (%v): no operator could decide a review; make the state dir and its files writable by this account again",
				p, err)
		}
	}
	return nil
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
