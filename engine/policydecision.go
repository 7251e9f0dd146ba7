package engine

import (
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/rego"
)

// PolicyDecision is data.mcpxfw.decision decoded. Outcome is never
// OutcomeError: a decision that cannot be decoded is an error instead.
type PolicyDecision struct {
	Outcome Outcome
	Deny    []Reason
	Review  []Reason
	// Waived are the baseline reasons the server's package waived by name:
	// they decided nothing, and are recorded so the relaxation shows.
	Waived []Reason
}

// decodeDecision checks the result of the decision query and decodes it
// once. Only a single object with a known outcome word and well-formed
// reason lists is a decision; anything else means the policy could not
// decide. A non-empty deny list makes a blocker whatever the word says:
// blockers are never overridable, and Go enforces that, not only Rego.
func decodeDecision(rs rego.ResultSet) (PolicyDecision, error) {
	doc, err := decisionObject(rs)
	if err != nil {
		return PolicyDecision{}, err
	}
	word, ok := doc["outcome"].(string)
	if !ok {
		return PolicyDecision{}, fmt.Errorf("policy decision: outcome is %s, not a word", jsonKind(doc["outcome"]))
	}
	outcome, err := outcomeFromPolicy(word)
	if err != nil {
		return PolicyDecision{}, err
	}
	d := PolicyDecision{Outcome: outcome}
	if d.Deny, err = decodeReasons(doc, "deny"); err != nil {
		return PolicyDecision{}, err
	}
	if d.Review, err = decodeReasons(doc, "review"); err != nil {
		return PolicyDecision{}, err
	}
	if d.Waived, err = decodeWaived(doc); err != nil {
		return PolicyDecision{}, err
	}
	if len(d.Deny) > 0 {
		d.Outcome = OutcomeBlocker
	}
	return d, nil
}

// decisionObject returns the one value of the query, which must be an
// object. The query is a plain reference, so anything but exactly one
// result with one expression means the policy left the decision undefined
// or OPA answered something this code does not understand.
func decisionObject(rs rego.ResultSet) (map[string]any, error) {
	switch {
	case len(rs) == 0:
		return nil, errors.New("policy decision is undefined: data.mcpxfw.decision produced no value")
	case len(rs) > 1:
		return nil, fmt.Errorf("policy decision is ambiguous: %d results", len(rs))
	case len(rs[0].Expressions) != 1:
		return nil, fmt.Errorf("policy decision is ambiguous: %d expressions", len(rs[0].Expressions))
	}
	value := rs[0].Expressions[0].Value
	doc, ok := value.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("policy decision is %s, not an object", jsonKind(value))
	}
	return doc, nil
}

// decodeReasons decodes the reason list under key: an array (the policy
// sorts its sets into arrays) of objects with a non-empty string code and a
// string message. The list is never nil, so logs show [] rather than null.
func decodeReasons(doc map[string]any, key string) ([]Reason, error) {
	list, ok := doc[key].([]any)
	if !ok {
		return nil, fmt.Errorf("policy decision: %s is %s, not an array", key, jsonKind(doc[key]))
	}
	reasons := make([]Reason, 0, len(list))
	for i, item := range list {
		r, err := decodeReason(item)
		if err != nil {
			return nil, fmt.Errorf("policy decision: %s[%d]: %w", key, i, err)
		}
		reasons = append(reasons, r)
	}
	return reasons, nil
}

// decodeWaived decodes the optional waived list: a composition of the
// operator's own may leave it out, which waives nothing.
func decodeWaived(doc map[string]any) ([]Reason, error) {
	if _, ok := doc["waived"]; !ok {
		return nil, nil
	}
	return decodeReasons(doc, "waived")
}

func decodeReason(item any) (Reason, error) {
	obj, ok := item.(map[string]any)
	if !ok {
		return Reason{}, fmt.Errorf("reason is %s, not an object", jsonKind(item))
	}
	code, ok := obj["code"].(string)
	if !ok {
		return Reason{}, fmt.Errorf("code is %s, not a string", jsonKind(obj["code"]))
	}
	if code == "" {
		return Reason{}, errors.New("code is empty")
	}
	message, ok := obj["message"].(string)
	if !ok {
		return Reason{}, fmt.Errorf("message is %s, not a string", jsonKind(obj["message"]))
	}
	return Reason{Code: code, Message: message}, nil
}

// jsonKind names the JSON kind of a decoded value for error messages,
// without quoting it: a policy's values may hold prompt text.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "missing or null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}
