package review

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Approve records an operator's yes. by names the operator (the CLI passes
// the OS user). If the item is no longer pending, including because it is
// past its deadline or its waiter ended, Approve returns a *DecidedError
// naming what happened first.
func (s *Store) Approve(ctx context.Context, id, by, note string) (Item, error) {
	return s.decide(ctx, id, decision{to: StateApproved, by: by, note: note})
}

// Edit is what an operator changed before approving: the whole new
// request params (request stage) or completion (result stage), and a diff
// for people.
type Edit struct {
	Value json.RawMessage
	Diff  string
}

// ApproveEdited records an operator's yes to their edited version of the
// item; the firewall re-validates and re-decides e.Value and forwards it in
// place of the original. Same rules as Approve.
func (s *Store) ApproveEdited(ctx context.Context, id, by, note string, e Edit) (Item, error) {
	if !json.Valid(e.Value) {
		return Item{}, fmt.Errorf("approve %s: the edit is not valid JSON", id)
	}
	return s.decide(ctx, id, decision{to: StateApproved, by: by, note: note, edited: e.Value, diff: e.Diff})
}

// Answer records a completion an operator wrote for a request-stage item,
// in place of the host's model. The firewall still runs result validation
// and the result-stage policy on it. Same rules as Approve.
func (s *Store) Answer(ctx context.Context, id, by, note string, completion json.RawMessage) (Item, error) {
	if !json.Valid(completion) {
		return Item{}, fmt.Errorf("answer %s: the completion is not valid JSON", id)
	}
	return s.decide(ctx, id, decision{to: StateApproved, by: by, note: note, answer: completion})
}

// Reject records an operator's no; reason is kept as the item's Note and
// in its history. Same rules as Approve.
func (s *Store) Reject(ctx context.Context, id, by, reason string) (Item, error) {
	return s.decide(ctx, id, decision{to: StateRejected, by: by, note: reason})
}

// decision is what an operator asks of a pending item.
type decision struct {
	to       State
	by, note string
	edited   json.RawMessage
	diff     string
	answer   json.RawMessage
}

func (d decision) verb() string {
	switch {
	case d.to == StateRejected:
		return "reject"
	case d.answer != nil:
		return "answer"
	}
	return "approve"
}

// decide is one transaction: close the item if it is due, then a
// conditional update from pending. Two operators deciding at once are
// serialised by SQLite's write lock; the second finds the item decided
// and gets a DecidedError naming the first.
func (s *Store) decide(ctx context.Context, id string, d decision) (Item, error) {
	op := d.verb()
	if d.by == "" {
		return Item{}, fmt.Errorf("%s %s: no operator name", op, id)
	}
	var it Item
	var settled bool
	var lost error
	err := s.write(ctx, func(tx *writeTx) error {
		var err error
		t := s.now()
		if it, settled, err = s.loadSettled(ctx, tx, id, t); err != nil {
			return err
		}
		if lost = refusal(it, d); lost != nil {
			return nil // commit the settlement; the decision itself lost
		}
		it.State, it.DecidedBy, it.DecidedAt, it.Note = d.to, d.by, t, d.note
		it.Edited, it.EditDiff, it.Answer = d.edited, d.diff, d.answer
		if err := updateState(ctx, tx, it, StatePending); err != nil {
			return err
		}
		return s.record(ctx, tx, id, StatePending, d.to, d.by, d.note, t)
	})
	return s.decided(op, id, it, settled, lost, err)
}

// refusal says why d cannot be applied to it, or nil if it can.
func refusal(it Item, d decision) error {
	if it.State != StatePending {
		return &DecidedError{Item: it}
	}
	if d.answer != nil && it.Stage != StageRequest {
		return fmt.Errorf("answer %s: it holds a completion already; change it with approve --edit", it.ID)
	}
	return nil
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
	err := s.write(ctx, func(tx *writeTx) error {
		var err error
		t := s.now()
		if it, settled, err = s.loadSettled(ctx, tx, id, t); err != nil {
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

// loadSettled reads an item inside tx after applying any expiry or
// abandonment that is due, so no decision lands on an item that is over.
func (s *Store) loadSettled(ctx context.Context, tx *writeTx, id string, t time.Time) (Item, bool, error) {
	it, err := load(ctx, tx, id)
	if err != nil {
		return Item{}, false, err
	}
	return s.settle(ctx, tx, it, t)
}
