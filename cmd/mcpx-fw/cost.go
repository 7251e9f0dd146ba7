package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// itemCost is what a review item may cost and what its server has spent:
// the facts an operator weighs beside the approve button. Every way of
// deciding (review show, the console) shows these numbers, so they are
// made here once.
type itemCost struct {
	// EstimatedTokens is the request's facts.estimated_tokens: what the
	// model reads, by the engine's one estimate (text, tool calls and
	// definitions, images, audio); 0 for a kind that costs no tokens
	// (elicitation, roots).
	EstimatedTokens int64
	// MaxTokens is the request's facts.max_tokens: what the model may
	// write.
	MaxTokens int64
	// ReservedTokens is what the request reserves against its server's
	// budget while it may reach the model (engine.Reservation): the two
	// above, as the engine charges them.
	ReservedTokens int64
	// Windows are the server's usage and budget in every configured usage
	// window, shortest first.
	Windows []costWindow
}

// costWindow is a server's usage within one sliding window ending now,
// and the budget configured for that window.
type costWindow struct {
	Name     string
	Duration time.Duration
	// Requests and Tokens are what input.usage.<window> shows the policy:
	// requests counted, and tokens charged against the budget.
	Requests, Tokens int64
	// BudgetRequests and BudgetTokens are the limits in this window, 0 for
	// none (windowBudget).
	BudgetRequests, BudgetTokens int64
}

// costOf is the cost of it: its request's facts, and its server's usage
// now against the server's budget. An erased request has no text left to
// count: its tokens are 0.
func costOf(ctx context.Context, rt *runtime, it review.Item) (itemCost, error) {
	windows, err := serverWindows(ctx, rt, it.Server)
	if err != nil {
		return itemCost{}, err
	}
	c := itemCost{Windows: windows}
	if it.ErasedAt.IsZero() && itemKind(it) == engine.KindSampling {
		facts := engine.Facts(engine.KindSampling, decodeObject(it.Request), nil)
		c.EstimatedTokens, c.MaxTokens = factInt(facts["estimated_tokens"]), factInt(facts["max_tokens"])
		c.ReservedTokens = engine.Reservation(facts).Tokens
	}
	return c, nil
}

// factInt reads a count from the facts: an int, or a json.Number as the
// request wrote it (0 when it is no integer).
func factInt(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case json.Number:
		i, _ := strconv.ParseInt(string(n), 10, 64)
		return i
	}
	return 0
}

// serverWindows is server's usage now in every configured window, with
// the budget servers.<server>.budget sets in each. A server no longer in
// the configuration has no budget.
func serverWindows(ctx context.Context, rt *runtime, server string) ([]costWindow, error) {
	r, windows, err := rt.usage.reader(ctx, rt)
	if err != nil {
		return nil, err
	}
	used, err := r.Read(ctx, server, time.Now())
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	budget := rt.cfg.Servers[server].Budget
	out := make([]costWindow, 0, len(windows))
	for name, d := range windows {
		w := costWindow{Name: name, Duration: d, Requests: used[name].Requests, Tokens: used[name].Tokens}
		w.BudgetRequests, w.BudgetTokens = windowBudget(budget, name)
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b costWindow) int {
		return cmp.Or(cmp.Compare(a.Duration, b.Duration), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// windowBudget is the part of b measured in window, as the shipped policy
// measures it (budget_windows in policies/mcpxfw/global.rego):
// hourly_tokens limits the tokens charged in the hour, burst_per_minute
// the requests in the minute. No other window has a limit.
func windowBudget(b config.Budget, window string) (requests, tokens int64) {
	switch window {
	case "hour":
		return 0, int64(b.HourlyTokens)
	case "minute":
		return int64(b.BurstPerMinute), 0
	}
	return 0, 0
}

// usageSource reads usage for the operator's commands: the configured
// windows, with a reader prepared on first use and kept as long as the
// runtime (a statement lives as long as the store, so preparing one per
// read would pile them up in a long-running console). A failed prepare is
// tried again on the next read.
type usageSource struct {
	mu      sync.Mutex
	windows map[string]time.Duration
	r       *review.UsageReader
}

// reader is the reader, and the windows it reads.
func (u *usageSource) reader(ctx context.Context, rt *runtime) (*review.UsageReader, map[string]time.Duration, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.r != nil {
		return u.r, u.windows, nil
	}
	windows, err := engine.UsageWindows(rt.cfg.Usage.Windows)
	if err != nil {
		return nil, nil, err
	}
	r, err := rt.store.UsageReader(ctx, windows)
	if err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	u.windows, u.r = windows, r
	return r, windows, nil
}
