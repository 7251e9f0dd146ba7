package engine

import "fmt"

// Outcome is the four-state result of a decision. Its zero value is
// OutcomeError, so a Verdict that nobody filled in fails closed.
type Outcome int

const (
	// OutcomeError: the firewall could not decide (policy error, timeout,
	// store failure). Fails closed; the operator reads the logs.
	OutcomeError Outcome = iota
	// OutcomePass: the host's model may answer.
	OutcomePass
	// OutcomeEscalate: a person must approve before the host is asked.
	OutcomeEscalate
	// OutcomeBlocker: never overridable, by anyone; the input must change.
	OutcomeBlocker
)

var outcomeWords = [...]string{
	OutcomeError:    "error",
	OutcomePass:     "pass",
	OutcomeEscalate: "escalate",
	OutcomeBlocker:  "blocker",
}

// String returns the word used in logs, the CLI and JSON output.
func (o Outcome) String() string {
	if o < 0 || int(o) >= len(outcomeWords) {
		return fmt.Sprintf("outcome(%d)", int(o))
	}
	return outcomeWords[o]
}

// MarshalText encodes the outcome as its word.
func (o Outcome) MarshalText() ([]byte, error) {
	if o < 0 || int(o) >= len(outcomeWords) {
		return nil, fmt.Errorf("invalid outcome %d", int(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText decodes one of pass, escalate, blocker, error.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, w := range outcomeWords {
		if w == string(b) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("unknown outcome %q", b)
}

// outcomeFromPolicy maps the words a policy may return to an Outcome. It is
// the only place that does so; any other word is an error, never a deny.
func outcomeFromPolicy(word string) (Outcome, error) {
	switch word {
	case "permit":
		return OutcomePass, nil
	case "review":
		return OutcomeEscalate, nil
	case "deny":
		return OutcomeBlocker, nil
	}
	return OutcomeError, fmt.Errorf("policy returned unknown outcome %q", word)
}
