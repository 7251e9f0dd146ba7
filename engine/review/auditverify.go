package review

import (
	"context"
	"fmt"
)

// ChainError names the first place where the audit chain does not hold:
// an entry whose content no longer matches its hash (edited), an entry
// that is not part of the chain (inserted), or entries that are gone
// (deleted, Seq through Last).
type ChainError struct {
	Kind   string // "edited", "inserted" or "deleted"
	Seq    int64
	Last   int64 // for deleted: the last missing entry (== Seq for one)
	Detail string
}

func (e *ChainError) Error() string {
	if e.Kind == "deleted" && e.Last > e.Seq {
		return fmt.Sprintf("audit entries %d to %d were deleted: %s", e.Seq, e.Last, e.Detail)
	}
	return fmt.Sprintf("audit entry %d was %s: %s", e.Seq, e.Kind, e.Detail)
}

// VerifyAudit walks the whole chain and returns its head, or a
// *ChainError for the first entry that breaks it. What it cannot see: a
// chain cut back and rebuilt with fresh hashes by someone who can write the
// file. Compare the head with one noted earlier (or shipped elsewhere with
// mcpx-fw audit --json) to catch that too.
func (a *auditChain) VerifyAudit(ctx context.Context) (ChainHead, int, error) {
	head, err := auditHead(ctx, a.db)
	if err != nil {
		return ChainHead{}, 0, err
	}
	rows, err := a.db.QueryContext(ctx, "SELECT "+auditColumns+" FROM audit ORDER BY seq")
	if err != nil {
		return ChainHead{}, 0, fmt.Errorf("read audit log: %w", err)
	}
	defer rows.Close()
	var last AuditEntry // the last entry that held; Seq 0 and Hash "" before the first
	n := 0
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return ChainHead{}, n, fmt.Errorf("read audit log: %w", err)
		}
		if err := checkLink(last, e, head); err != nil {
			return ChainHead{}, n, err
		}
		last, n = e, n+1
	}
	if err := rows.Err(); err != nil {
		return ChainHead{}, n, fmt.Errorf("read audit log: %w", err)
	}
	return head, n, checkEnd(last, head)
}

// checkLink checks that e follows last in the chain recorded up to head.
func checkLink(last, e AuditEntry, head ChainHead) error {
	switch {
	case e.Seq > head.Seq:
		return &ChainError{Kind: "inserted", Seq: e.Seq,
			Detail: fmt.Sprintf("the chain ends at entry %d, and this entry comes after it", head.Seq)}
	case e.Hash != e.chainHash():
		return &ChainError{Kind: "edited", Seq: e.Seq, Detail: "its content does not match its hash"}
	case e.Seq > last.Seq+1:
		return &ChainError{Kind: "deleted", Seq: last.Seq + 1, Last: e.Seq - 1,
			Detail: fmt.Sprintf("entry %d follows entry %d", e.Seq, last.Seq)}
	case e.Prev != last.Hash:
		return &ChainError{Kind: "edited", Seq: last.Seq,
			Detail: fmt.Sprintf("its hash was recomputed after a change: entry %d still chains to the original", e.Seq)}
	}
	return nil
}

// checkEnd checks that the chain ends where its head says.
func checkEnd(last AuditEntry, head ChainHead) error {
	switch {
	case last.Seq < head.Seq:
		return &ChainError{Kind: "deleted", Seq: last.Seq + 1, Last: head.Seq,
			Detail: fmt.Sprintf("the chain head records entry %d, the log ends at %d", head.Seq, last.Seq)}
	case last.Hash != head.Hash:
		return &ChainError{Kind: "edited", Seq: last.Seq, Detail: "its hash is not the one the chain head records"}
	}
	return nil
}
