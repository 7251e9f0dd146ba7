package review

import (
	"context"
	"database/sql"
	"sync"
)

// prepared holds statements a Store runs often (a decision's write, the
// kept inputs' inserts), each prepared once for the Store's life. Preparing is most of a small statement's
// cost on SQLite, more so for one that fires triggers (their programs are
// compiled into it): run as text, the settlement's UPDATE would be parsed
// and compiled again for every completion.
type prepared struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// stmt is q prepared on db, preparing it on first use; a failed prepare
// is not kept.
func (p *prepared) stmt(ctx context.Context, d *db, q string) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.stmts[q]; ok {
		return s, nil
	}
	s, err := d.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if p.stmts == nil {
		p.stmts = map[string]*sql.Stmt{}
	}
	p.stmts[q] = s
	return s, nil
}

// execIn runs q, prepared once, inside tx.
func (p *prepared) execIn(ctx context.Context, d *db, tx *writeTx, q string, args ...any) (sql.Result, error) {
	s, err := p.stmt(ctx, d, q)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, s).ExecContext(ctx, args...)
}

// close closes every statement, at Close.
func (p *prepared) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stmts {
		s.Close()
	}
	p.stmts = nil
}
