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

// expiryWords say what the upstream gets when nobody decides in time.
func expiryWords(it review.Item) string {
	if ItemKind(it) == engine.KindElicitation && legacyEra(it) {
		return `{"action": "cancel"}`
	}
	return `-32603 "expired"`
}

// rejectWords say what the upstream gets when the operator rejects.
func rejectWords(it review.Item) string {
	if ItemKind(it) == engine.KindElicitation && legacyEra(it) {
		return `{"action": "decline"}`
	}
	return "-1 (user rejected)"
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
