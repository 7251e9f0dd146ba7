package review

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
)

// dialect is what differs between the two databases a Store can keep its
// queue in: the embedded SQLite file (the default) and a PostgreSQL server
// shared by several serve replicas (postgres.go). Every query in the
// package is written once, in SQLite's spelling with ? placeholders; the
// dialect rewrites the placeholders for PostgreSQL, and the few statements
// that have no common spelling (schema versions, the write lock, WAL
// checkpoints) live behind it.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

func (d dialect) String() string {
	if d == dialectPostgres {
		return "postgres"
	}
	return "sqlite"
}

// binder spells queries for one database. binds caches each query's
// PostgreSQL spelling, shared by a Store's pool and its transactions: the
// queries are a fixed set of constants and built strings, so it stays
// small. A nil cache spells every query afresh.
type binder struct {
	dialect dialect
	binds   *sync.Map // string -> string
}

func newBinder(d dialect) binder { return binder{dialect: d, binds: new(sync.Map)} }

// bind returns q with its ? placeholders numbered $1, $2, … for
// PostgreSQL, and q itself for SQLite. A ? inside a quoted literal or
// identifier is left alone.
func (d binder) bind(q string) string {
	if d.dialect != dialectPostgres || !strings.Contains(q, "?") {
		return q
	}
	if d.binds != nil {
		if b, ok := d.binds.Load(q); ok {
			return b.(string)
		}
	}
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	if d.binds != nil {
		d.binds.Store(q, b.String())
	}
	return b.String()
}

// db is the Store's connection pool, with every query written in the
// package's spelling rewritten for the database behind it.
type db struct {
	*sql.DB
	binder
}

func (d *db) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return d.DB.ExecContext(ctx, d.bind(q), args...)
}

// QueryContext runs q on a pooled connection; a read that finds its
// connection lost runs again on another (retryRead).
func (d *db) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q = d.bind(q)
	rows, err := d.DB.QueryContext(ctx, q, args...)
	for range maxConns() {
		if !d.retryRead(ctx, q, err) {
			break
		}
		rows, err = d.DB.QueryContext(ctx, q, args...)
	}
	return rows, err
}

// QueryRowContext is QueryContext for one row. The query runs here (its
// error waits in the Row until Scan), so a lost connection is seen and
// the read retried here too.
func (d *db) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	q = d.bind(q)
	return d.readRow(ctx, q, func() *sql.Row { return d.DB.QueryRowContext(ctx, q, args...) })
}

// readRow runs query q with run and returns its row, running it again as
// retryRead allows. A statement prepared on the pool (UsageReader) reads
// through it too.
func (d binder) readRow(ctx context.Context, q string, run func() *sql.Row) *sql.Row {
	row := run()
	for range maxConns() {
		if !d.retryRead(ctx, q, row.Err()) {
			break
		}
		row = run()
	}
	return row
}

// retryRead reports whether q, run on the pool, failed with err only
// because its connection was gone, and may run again on another. After a
// PostgreSQL restart every pooled connection is dead, and pgx cannot tell
// that the server never read the statement (a write that meets a closed
// socket is not "safe to retry"), so database/sql hands the error back
// instead of trying the next connection. The failed connection is
// discarded; the next attempt takes another idle one or dials, so the
// pool's idle connections (maxConns) plus one new one are enough. Only a
// SELECT is run again: running it twice changes nothing. A statement that
// writes (DELETE … RETURNING) is never retried here, and a write
// transaction's statements go through writeTx, never this; Store.begin
// alone retries, before anything is sent.
func (d binder) retryRead(ctx context.Context, q string, err error) bool {
	return err != nil && d.dialect == dialectPostgres && ctx.Err() == nil &&
		connectionLost(err) && reads(q)
}

// reads reports a statement that only reads: a SELECT. The package runs
// no function with effects (locks, notifications) in a SELECT outside a
// write transaction.
func reads(q string) bool {
	return strings.HasPrefix(strings.TrimLeft(q, " \t\n"), "SELECT")
}

func (d *db) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return d.DB.PrepareContext(ctx, d.bind(q))
}

// Exec, QueryRow and Query are the context-free forms tests use.
func (d *db) Exec(q string, args ...any) (sql.Result, error) {
	return d.ExecContext(context.Background(), q, args...)
}

func (d *db) QueryRow(q string, args ...any) *sql.Row {
	return d.QueryRowContext(context.Background(), q, args...)
}

func (d *db) Query(q string, args ...any) (*sql.Rows, error) {
	return d.QueryContext(context.Background(), q, args...)
}

// writeTx is one write transaction (Store.write), spelling queries as db does.
type writeTx struct {
	*sql.Tx
	binder
}

func (t *writeTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.bind(q), args...)
}

func (t *writeTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, t.bind(q), args...)
}

func (t *writeTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.bind(q), args...)
}
