package main

import (
	"sort"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/console"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// costWindows lists usage per window, by name, with the budget that
// applies there: hourly tokens in the hour, burst requests in the minute.
func costWindows(usage map[string]review.Usage, b BudgetConfig) []console.Window {
	var out []console.Window
	for name, u := range usage {
		w := console.Window{Name: name, Requests: u.Requests, Tokens: u.Tokens}
		switch name {
		case "hour":
			w.BudgetTokens = int64(b.HourlyTokens)
		case "minute":
			w.BudgetRequests = int64(b.BurstPerMinute)
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// textBytes counts the text a request's model reads: the system prompt
// and every text block of its messages, tool results' included.
func textBytes(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for k, val := range x {
			if s, ok := val.(string); ok && (k == "text" || k == "systemPrompt") {
				n += len(s)
			} else {
				n += textBytes(val)
			}
		}
		return n
	case []any:
		n := 0
		for _, val := range x {
			n += textBytes(val)
		}
		return n
	}
	return 0
}
