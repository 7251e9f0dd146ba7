package review

import (
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is returned (wrapped; test with errors.Is) for an id the
// queue has never held.
var ErrNotFound = errors.New("not found")

// ErrNotApproved is returned by Finish for an item that is still pending:
// only an approved item can be delivered or failed.
var ErrNotApproved = errors.New("not approved")

// DecidedError is returned when an item can no longer take the requested
// transition because it was already decided (or expired, or abandoned).
// The first answer stands; Item is the item as stored, so the caller can
// show who won.
type DecidedError struct {
	Item Item
}

// Error names who decided and when, in words an operator can act on.
func (e *DecidedError) Error() string {
	it := e.Item
	at := it.DecidedAt.UTC().Format(time.RFC3339)
	switch it.State {
	case StateApproved:
		return fmt.Sprintf("%s was already %s by %s at %s", it.ID, approval(it), it.DecidedBy, at)
	case StateRejected:
		return fmt.Sprintf("%s was already rejected by %s at %s", it.ID, it.DecidedBy, at)
	case StateExpired:
		return fmt.Sprintf("%s expired at %s without a decision", it.ID, at)
	case StateAbandoned:
		return fmt.Sprintf("%s was abandoned at %s: %s", it.ID, at, it.Note)
	case StateDelivered, StateFailed:
		return fmt.Sprintf("%s was %s by %s at %s and then %s at %s",
			it.ID, approval(it), it.DecidedBy, at, it.State, it.FinishedAt.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s is %s", it.ID, it.State)
}

// approval names how an item was approved, in the words of the audit log.
func approval(it Item) string {
	switch {
	case it.Answer != nil:
		return "answered"
	case it.Edited != nil:
		return "approved with edits"
	}
	return "approved"
}
