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

func (d *db) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return d.DB.QueryContext(ctx, d.bind(q), args...)
}

func (d *db) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return d.DB.QueryRowContext(ctx, d.bind(q), args...)
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
