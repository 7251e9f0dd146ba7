package review

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// State is where an item is in its life. The words are the ones the CLI,
// logs and JSON output use.
type State string

const (
	// StatePending: waiting for an operator; the only state that can be
	// decided.
	StatePending State = "pending"
	// StateApproved: an operator said yes; the firewall re-checks the item
	// and then delivers it or records a failure.
	StateApproved State = "approved"
	// StateRejected: an operator said no.
	StateRejected State = "rejected"
	// StateExpired: nobody decided before the deadline. Not a rejection:
	// nobody said no.
	StateExpired State = "expired"
	// StateAbandoned: the waiting process ended or its request was
	// cancelled; nobody is left to deliver an approval.
	StateAbandoned State = "abandoned"
	// StateDelivered: approved and forwarded.
	StateDelivered State = "delivered"
	// StateFailed: approved, but the firewall's re-check refused it or the
	// waiting process ended before delivering it.
	StateFailed State = "failed"
)

// Terminal reports whether no further transition can happen.
func (st State) Terminal() bool {
	return st != StatePending && st != StateApproved
}

// Stages of an escalation: the sampling request before the host's model
// sees it, and the completion before it goes back to the upstream.
const (
	StageRequest = "request"
	StageResult  = "result"
)

// Reason is one policy reason for an escalation.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Item is one review. The JSON names are those of `review list --json` and
// `review show --json`.
type Item struct {
	ID         string `json:"id"`
	Parent     string `json:"parent,omitempty"` // result stage: the request-stage item it follows
	DecisionID string `json:"decision_id"`
	Server     string `json:"server"` // the config name, not what the upstream claims
	Label      string `json:"label,omitempty"`
	Stage      string `json:"stage"`
	Era        string `json:"era,omitempty"`
	State      State  `json:"state"`

	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Reasons   []Reason  `json:"reasons"`
	// Waived are the baseline reasons the server's policy waived by name
	// on the decision that opened the item: they did not hold it, and the
	// reviewer sees what the server's policy relaxed. None on an item
	// stored before they were kept.
	Waived []Reason `json:"waived,omitempty"`

	// Request is the sampling params exactly as they will be forwarded.
	Request json.RawMessage `json:"request,omitempty"`
	// Result is the completion, at the result stage only.
	Result json.RawMessage `json:"result,omitempty"`
	// Context is opaque JSON the firewall needs to re-evaluate the item
	// after approval (era, capabilities, host info).
	Context json.RawMessage `json:"context,omitempty"`

	// Edited is what the operator approved in place of the original when
	// they edited it: the request params at the request stage, the
	// completion at the result stage. The original stays in Request or
	// Result. EditDiff is a line diff of the two as the operator edited
	// them, for show.
	Edited   json.RawMessage `json:"edited,omitempty"`
	EditDiff string          `json:"edit_diff,omitempty"`
	// Answer is the completion an operator wrote in place of the host's
	// model (mcpx-fw review answer), as CreateMessageResult JSON.
	Answer json.RawMessage `json:"answer,omitempty"`
	// ErasedAt is when retention erased the item's prompt and completion
	// text (Request, Result, Edited, Answer); zero while they are kept.
	ErasedAt time.Time `json:"erased_at,omitzero"`

	// Owner names the waiting process, see owner.go.
	Owner string `json:"owner"`

	// DecidedBy, DecidedAt and Note record the decision: the operator and
	// their note, or (with DecidedBy empty) why the queue itself closed the
	// item. DecidedAt of an expired item is its deadline.
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	Note      string    `json:"note,omitempty"`

	// FinishedAt and FinishNote record delivery or failure of an approved
	// item, kept apart so the operator's note survives.
	FinishedAt time.Time `json:"finished_at,omitzero"`
	FinishNote string    `json:"finish_note,omitempty"`
}

// Filter selects items for List.
type Filter struct {
	All    bool   // every state; default pending only
	Server string // one server's items; default all servers
}

// newID returns "rv-" and 16 lowercase hex digits from crypto/rand: short
// enough to type, unguessable so a listing of one server's items reveals
// nothing about another's.
func newID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails; it crashes the program instead
	return "rv-" + hex.EncodeToString(b[:])
}

// ValidID reports whether id has the shape newID makes, so the CLI can
// say "not a review id" before asking the store.
func ValidID(id string) bool {
	if len(id) != 19 || id[:3] != "rv-" {
		return false
	}
	for _, c := range id[3:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ExpiryMessage is the sentence a review that expired is refused with,
// for a review opened with timeout: the relay puts it on the wire, and
// show says it before it happens, so both read the same words.
func ExpiryMessage(timeout time.Duration) string {
	return fmt.Sprintf("expired after %s awaiting review", timeout)
}

// Timeout is how long the item was given to be decided.
func (it Item) Timeout() time.Duration { return it.ExpiresAt.Sub(it.CreatedAt) }
