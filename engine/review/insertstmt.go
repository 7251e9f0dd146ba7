package review

import (
	"context"
	"database/sql"
)

// insertStmt is s's insertDecision, prepared once and reused for every
// decision: preparing the insert also compiles the usage trigger
// (migration 4), which costs more than running both. A failed prepare is
// not kept: the next decision tries again.
func (s *Store) insertStmt(ctx context.Context) (*sql.Stmt, error) {
	s.insertMu.Lock()
	defer s.insertMu.Unlock()
	if s.insert != nil {
		return s.insert, nil
	}
	stmt, err := s.db.PrepareContext(ctx, insertDecision)
	if err != nil {
		return nil, err
	}
	s.insert = stmt
	return stmt, nil
}
