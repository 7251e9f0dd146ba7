package telemetry

// Other is the server (or window, or sink) label of a name the config does
// not know: what the relay reports is bounded by the config, whatever it
// is asked to record.
const Other = "other"

// The fixed vocabularies labels take their values from. An unknown word is
// recorded as the vocabulary's last entry (an error, or Other), never as
// given.
var (
	kinds          = []string{"sampling", "elicitation", "roots"}
	stages         = []string{"request", "result"}
	outcomes       = []string{"pass", "escalate", "blocker", "error"}
	reviewOutcomes = []string{"approved", "rejected", "expired", "abandoned", "error"}
	answerResults  = []string{"ok", "rejected", "error"}
	startResults   = []string{"ok", "error"}
	sinkNames      = []string{"file", "service", Other}
	reloadResults  = []string{"ok", "compile_error", "download_error", "verify_error"}
	// limits are the config keys whose limits refuse requests or sessions
	// at once (relay admission, the bridge pool, http.max_sessions).
	limits = []string{
		"limits.max_in_flight", "limits.max_pending_reviews", "limits.max_held_bytes",
		"limits.max_in_flight_per_host", "limits.max_pending_reviews_per_host", "limits.max_held_bytes_per_host",
		"limits.max_bridged_calls", "limits.max_bridged_calls_per_server", "http.max_sessions", Other,
	}
)

// index is w's position in vocab, or the last position when w is not in
// it. The vocabularies are a handful of words: a scan is cheaper than a
// map and allocates nothing.
func index(vocab []string, w string) int {
	for i, v := range vocab {
		if v == w {
			return i
		}
	}
	return len(vocab) - 1
}

// bounded is name when it is one of known, else Other.
func bounded(known map[string]bool, name string) string {
	if known[name] {
		return name
	}
	return Other
}

// set is names as a lookup, Other included.
func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names)+1)
	for _, n := range names {
		m[n] = true
	}
	m[Other] = true
	return m
}

// withOther is names followed by Other, the label values a per-server
// metric is made for.
func withOther(names []string) []string {
	out := make([]string, 0, len(names)+1)
	for _, n := range names {
		if n != Other {
			out = append(out, n)
		}
	}
	return append(out, Other)
}
