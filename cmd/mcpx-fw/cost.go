package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// costOf is the cost of it: its request's facts, and its server's usage
// now against the server's budget (render.CostOf).
func costOf(ctx context.Context, rt *runtime, it review.Item) (render.Cost, error) {
	windows, err := serverWindows(ctx, rt, it.Server)
	if err != nil {
		return render.Cost{}, err
	}
	return render.CostOf(it, windows), nil
}

// serverWindows is server's usage now in every configured window, with
// the budget servers.<server>.budget sets in each. A server no longer in
// the configuration has no budget.
func serverWindows(ctx context.Context, rt *runtime, server string) ([]render.CostWindow, error) {
	r, windows, err := rt.usage.reader(ctx, rt)
	if err != nil {
		return nil, err
	}
	used, err := r.Read(ctx, server, time.Now())
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	budget := rt.cfg.Servers[server].Budget
	out := make([]render.CostWindow, 0, len(windows))
	for name, d := range windows {
		w := render.CostWindow{Name: name, Duration: d, Requests: used[name].Requests, Tokens: used[name].Tokens}
		w.BudgetRequests, w.BudgetTokens = windowBudget(budget, name)
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b render.CostWindow) int {
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

// listBudgets is what is left of the budget of each server in items, read
// once per server.
func listBudgets(ctx context.Context, rt *runtime, items []review.Item) (map[string]*render.BudgetLeft, error) {
	out := map[string]*render.BudgetLeft{}
	for _, it := range items {
		if _, done := out[it.Server]; done {
			continue
		}
		ws, err := serverWindows(ctx, rt, it.Server)
		if err != nil {
			return nil, err
		}
		out[it.Server] = render.LeftOf(ws)
	}
	return out, nil
}
