package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// DefaultUsageWindows are the sliding windows input.usage always reports.
// The shipped budget rules are written against them (hourly tokens, burst
// per minute), so configuration may add windows but not redefine these.
var DefaultUsageWindows = map[string]time.Duration{"minute": time.Minute, "hour": time.Hour}

// windowName is what a window may be called: a Rego identifier, so rules
// can write input.usage.day.
var windowName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Usage is a server's use of sampling (and elicitation, see charge) per
// window, as input.usage shows it.
// A nil Usage passed to Preview means "read it from the store".
type Usage map[string]review.Usage

// UsageWindows merges configured extra windows into DefaultUsageWindows,
// refusing names that are not identifiers, durations that are not positive,
// and a default redefined. The configuration checks its usage.windows with
// it, so a bad window stops start-up with the key named.
func UsageWindows(extra map[string]time.Duration) (map[string]time.Duration, error) {
	out := maps.Clone(DefaultUsageWindows)
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		d := extra[name]
		switch fixed, isDefault := DefaultUsageWindows[name]; {
		case !windowName.MatchString(name):
			return nil, fmt.Errorf("usage window %q: names are lower-case identifiers", name)
		case d <= 0:
			return nil, fmt.Errorf("usage window %s: %s is not a positive duration", name, d)
		case isDefault && d != fixed:
			return nil, fmt.Errorf("usage window %s is always %s", name, fixed)
		}
		out[name] = d
	}
	return out, nil
}

// document renders usage as input.usage: one object per window.
func (u Usage) document() map[string]any {
	out := make(map[string]any, len(u))
	for name, w := range u {
		out[name] = map[string]any{
			"requests":         w.Requests,
			"requested_tokens": w.RequestedTokens,
			"returned_tokens":  w.ReturnedTokens,
			"tokens":           w.Tokens,
		}
	}
	return out
}

// maxCharge bounds what one request may reserve. maxTokens may be as large
// as an int64; summing a few of those would overflow the store's sums and
// leave the server's usage unreadable. No budget is anywhere near it.
const maxCharge = 1 << 40

// usageKeys are the names hosts use for output tokens in a result's
// _meta.usage; MCP has no field of its own for it.
var usageKeys = []string{"outputTokens", "output_tokens", "completion_tokens"}

// returnedTokens is what the completion cost: the count the result itself
// reports in _meta.usage, else the estimate (estimate.go) of everything in
// its content, text, tool calls, images and audio alike (a completion that
// failed validation is estimated from its raw bytes, as text: it was
// generated all the same).
func returnedTokens(result validate.Document, raw []byte) int64 {
	var c tokenCount
	if result == nil {
		c.text(string(raw))
		return c.tokens()
	}
	if n, ok := reportedTokens(result); ok {
		return n
	}
	for _, b := range blocksOf(result["content"]) {
		c.block(b)
	}
	return c.tokens()
}

// reportedTokens is the output count a result reports in _meta.usage.
func reportedTokens(result validate.Document) (int64, bool) {
	meta, _ := result["_meta"].(map[string]any)
	u, _ := meta["usage"].(map[string]any)
	for _, key := range usageKeys {
		if n, ok := u[key].(json.Number); ok {
			if v, err := strconv.ParseInt(string(n), 10, 64); err == nil && v >= 0 {
				return min(v, maxCharge), true
			}
		}
	}
	return 0, false
}

// documentInt reads a validated integer (json.Number) as int64; anything
// else is 0.
func documentInt(v any) int64 {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0
	}
	return i
}
