package render

import (
	"encoding/json"
	"fmt"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// ItemKind is what an item's upstream asks of the host, as the firewall
// recorded it in the item's context (the engine.Request it decided on):
// sampling when the context names no kind, as items stored before there
// were kinds do, or cannot be read.
func ItemKind(it review.Item) engine.Kind {
	var c struct {
		Kind engine.Kind `json:"kind"`
	}
	if json.Unmarshal(it.Context, &c) != nil || c.Kind == "" {
		return engine.KindSampling
	}
	return c.Kind
}

// heldWords say what an item holds back, by kind and stage.
func heldWords(it review.Item) string {
	result := it.Stage == review.StageResult
	switch ItemKind(it) {
	case engine.KindSampling:
		if result {
			return "the completion is held"
		}
		return "the prompt is held"
	case engine.KindElicitation:
		if result {
			return "the user's answer is held"
		}
		return "the user has not been asked yet"
	case engine.KindRoots:
		if result {
			return "the host's roots are held"
		}
		return "the host has not been asked yet"
	}
	return "held"
}

// legacyEra reports whether the item's upstream speaks a protocol before
// 2026-07-28, where a refused elicitation is answered with an action
// rather than an error. Protocol versions are dates, so they compare as
// strings.
func legacyEra(it review.Item) bool {
	return it.Era == "" || it.Era < "2026-07-28"
}

// expiryWords say what happens when nobody decides in time, as relay
// answers an expired review (relay/internal/refusal): -32603 with
// review.ExpiryMessage, which an upstream before 2026-07-28 gets for
// sampling and roots, while its elicitation gets the result {"action":
// "cancel"}, except that a URL from its -32042 error is refused on the
// host's call that got the error. A 2026-07-28 upstream asked in its
// result's input requests: the host's call fails, and the upstream is
// never retried with it.
func expiryWords(it review.Item) string {
	expired := fmt.Sprintf("-32603 %q", review.ExpiryMessage(it.Timeout()))
	switch {
	case !legacyEra(it):
		return "the host's call fails with " + expired + " and the upstream is not retried"
	case ItemKind(it) != engine.KindElicitation:
		return "the upstream gets " + expired
	case decodeObject(it.Request)["mode"] == "url":
		return `the upstream gets {"action": "cancel"} (a URL from a -32042 error: the host's call fails with ` + expired + ")"
	}
	return `the upstream gets {"action": "cancel"}`
}

// RejectEffect says what rejecting it does, as relay answers a refusal
// by reviewer (relay/internal/refusal): an upstream before 2026-07-28
// gets -1 (user rejected) for sampling and roots, and for an elicitation
// the result {"action": "decline"}, except that a URL from its -32042
// error is refused on the host's call that got the error. A 2026-07-28
// upstream asked in its result's input requests: a refused one fails the
// host's call with -1, and the upstream is never retried with it.
func RejectEffect(it review.Item) string {
	const hostCall = "the host's call fails with -1 (user rejected)"
	switch {
	case !legacyEra(it):
		return hostCall + " and the upstream is not retried"
	case ItemKind(it) != engine.KindElicitation:
		return "the upstream gets -1 (user rejected)"
	case decodeObject(it.Request)["mode"] == "url":
		return `the upstream gets {"action": "decline"} (a URL from a -32042 error: the host's call gets -1)`
	}
	return `the upstream gets {"action": "decline"}`
}

// ItemRequest is the request an item holds, as the engine saw it (its
// kind included).
func ItemRequest(it review.Item) (engine.Request, error) {
	var s engine.Request
	if err := json.Unmarshal(it.Context, &s); err != nil {
		return s, fmt.Errorf("%s: stored context unreadable: %w", it.ID, err)
	}
	s.Params = it.Request
	return s, nil
}
