package review

import (
	"context"
	"database/sql"
	"fmt"

	"go.uber.org/zap"
)

// Approve records an operator's yes. by names the operator (the CLI passes
// the OS user). If the item is no longer pending, including because it is
// past its deadline or its waiter ended, Approve returns a *DecidedError
// naming what happened first.
func (s *Store) Approve(ctx context.Context, id, by, note string) (Item, error) {
	return s.decide(ctx, id, StateApproved, by, note)
}

// Reject records an operator's no; reason is kept as the item's Note and
// in its history. Same rules as Approve.
func (s *Store) Reject(ctx context.Context, id, by, reason string) (Item, error) {
	return s.decide(ctx, id, StateRejected, by, reason)
}

// decide is one transaction: close the item if it is due, then a
// conditional update from pending. Two operators deciding at once are
// serialised by SQLite's write lock; the second finds the item decided
// and gets a DecidedError naming the first.
func (s *Store) decide(ctx context.Context, id string, to State, by, note string) (Item, error) {
	op := verb(to)
	if by == "" {
		return Item{}, fmt.Errorf("%s %s: no operator name", op, id)
	}
	var it Item
	var settled bool
	var lost error
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if it, err = load(ctx, tx, id); err != nil {
			return err
		}
		t := now()
		if it, settled, err = s.settle(ctx, tx, it, t); err != nil {
			return err
		}
		if it.State != StatePending {
			lost = &DecidedError{Item: it}
			return nil // commit the settlement; the decision itself lost
		}
		it.State, it.DecidedBy, it.DecidedAt, it.Note = to, by, t, note
		if err := updateState(ctx, tx, it, StatePending); err != nil {
			return err
		}
		return s.record(ctx, tx, id, StatePending, to, by, note, t)
	})
	return s.decided(op, id, it, settled, lost, err)
}

// decided turns decide's transaction result into its return values and
// the wake-ups and log lines that follow a commit.
func (s *Store) decided(op, id string, it Item, settled bool, lost, err error) (Item, error) {
	if err != nil {
		return Item{}, opError(op, id, err)
	}
	if settled {
		s.closed(it)
	}
	if lost != nil {
		return Item{}, lost
	}
	s.notify(it.ID)
	s.log.Info("review "+string(it.State), append(itemFields(it), zap.String("operator", it.DecidedBy))...)
	return it, nil
}

func verb(to State) string {
	if to == StateApproved {
		return "approve"
	}
	return "reject"
}

// Finish records what became of an approved item: StateDelivered when the
// firewall forwarded it, StateFailed when its re-check refused it. It
// returns an error wrapping ErrNotApproved for a pending item, and a
// *DecidedError for one that was never approved or is already finished.
func (s *Store) Finish(ctx context.Context, id string, st State, note string) (Item, error) {
	if st != StateDelivered && st != StateFailed {
		return Item{}, fmt.Errorf("finish %s: state %q is neither delivered nor failed", id, st)
	}
	var it Item
	var settled bool
	var lost error
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if it, err = load(ctx, tx, id); err != nil {
			return err
		}
		t := now()
		if it, settled, err = s.settle(ctx, tx, it, t); err != nil {
			return err
		}
		if lost = notApproved(it); lost != nil {
			return nil
		}
		it.State, it.FinishedAt, it.FinishNote = st, t, note
		if err := updateState(ctx, tx, it, StateApproved); err != nil {
			return err
		}
		return s.record(ctx, tx, id, StateApproved, st, "", note, t)
	})
	return s.decided("finish", id, it, settled, lost, err)
}

// notApproved says why an item cannot be finished, or nil if it can.
func notApproved(it Item) error {
	switch it.State {
	case StateApproved:
		return nil
	case StatePending:
		return fmt.Errorf("finish %s: %w (still pending)", it.ID, ErrNotApproved)
	}
	return &DecidedError{Item: it}
}
