package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// budgetLeft is what a server may still spend before its budget acts, as
// the shipped policy applies it: tokens until budget-exhausted denies a
// request whose reservation (its prompt's estimate and its maxTokens) does
// not fit in them, requests until burst holds
// every further one for review. Where several windows limit the same
// thing, the tightest (the least left; the shorter window on a tie) is
// what is left. A limit already passed leaves 0. nil: no budget.
type budgetLeft struct {
	Tokens   *limitLeft `json:"tokens,omitempty"`
	Requests *limitLeft `json:"requests,omitempty"`
}

// limitLeft is one limit's remainder and the window it is counted in.
type limitLeft struct {
	Window string `json:"window"`
	Left   int64  `json:"left"`
	Budget int64  `json:"budget"`
}

// leftOf is what is left of the budgets in ws (shortest window first), nil
// when no window has one.
func leftOf(ws []costWindow) *budgetLeft {
	var b budgetLeft
	for _, w := range ws {
		b.Tokens = tighter(b.Tokens, w.Name, w.BudgetTokens, w.Tokens)
		b.Requests = tighter(b.Requests, w.Name, w.BudgetRequests, w.Requests)
	}
	if b.Tokens == nil && b.Requests == nil {
		return nil
	}
	return &b
}

// tighter is the tighter of cur and the limit budget in window with used
// spent; a budget of 0 is no limit.
func tighter(cur *limitLeft, window string, budget, used int64) *limitLeft {
	if budget <= 0 {
		return cur
	}
	l := &limitLeft{Window: window, Left: max(budget-used, 0), Budget: budget}
	if cur != nil && cur.Left <= l.Left {
		return cur
	}
	return l
}

// String is the list's BUDGET LEFT cell: "3900 tok/hour, 3 req/minute",
// or "—" for no budget.
func (b *budgetLeft) String() string {
	if b == nil {
		return "—"
	}
	var parts []string
	if b.Tokens != nil {
		parts = append(parts, fmt.Sprintf("%d tok/%s", b.Tokens.Left, inert.Word(b.Tokens.Window)))
	}
	if b.Requests != nil {
		parts = append(parts, fmt.Sprintf("%d req/%s", b.Requests.Left, inert.Word(b.Requests.Window)))
	}
	return strings.Join(parts, ", ")
}

// listBudgets is what is left of the budget of each server in items, read
// once per server.
func listBudgets(ctx context.Context, rt *runtime, items []review.Item) (map[string]*budgetLeft, error) {
	out := map[string]*budgetLeft{}
	for _, it := range items {
		if _, done := out[it.Server]; done {
			continue
		}
		ws, err := serverWindows(ctx, rt, it.Server)
		if err != nil {
			return nil, err
		}
		out[it.Server] = leftOf(ws)
	}
	return out, nil
}

// renderCost prints what letting it through may cost, just before the
// commands to act: what the request has the model read (estimated) and
// write (maxTokens), and what the two reserve against the budget (sampling
// alone costs tokens), then its server's usage now in every window against
// its budget, and what is left of that budget.
func renderCost(w io.Writer, it review.Item, c itemCost) {
	fmt.Fprintln(w)
	if itemKind(it) == engine.KindSampling {
		fmt.Fprintf(w, "Tokens:   ~%d to read (estimated) + maxTokens %d = %d reserved\n", c.EstimatedTokens, c.MaxTokens, c.ReservedTokens)
	}
	left := leftOf(c.Windows)
	budget := "no budget configured"
	if left != nil {
		budget = "against its budget"
	}
	fmt.Fprintf(w, "Usage of %s now, %s:\n", inert.Line(it.Server), budget)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  WINDOW\tREQUESTS\tTOKENS")
	for _, win := range c.Windows {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", inert.Word(win.Name), usedOf(win.Requests, win.BudgetRequests), usedOf(win.Tokens, win.BudgetTokens))
	}
	_ = tw.Flush()
	if left != nil {
		fmt.Fprintf(w, "  budget left: %s\n", left)
	}
}

// usedOf is a window's count, and its limit with what is left of it when
// there is one.
func usedOf(used, budget int64) string {
	if budget <= 0 {
		return strconv.FormatInt(used, 10)
	}
	return fmt.Sprintf("%d of %d (%d left)", used, budget, max(budget-used, 0))
}

// costJSON is show --json's "cost": itemCost with the budget left.
type costJSON struct {
	EstimatedTokens int64        `json:"estimated_tokens"`
	MaxTokens       int64        `json:"max_tokens"`
	ReservedTokens  int64        `json:"reserved_tokens"`
	Windows         []windowJSON `json:"windows"`
	BudgetLeft      *budgetLeft  `json:"budget_left"`
}

// windowJSON is one usage window; a budget of 0 (no limit) is left out.
type windowJSON struct {
	Name           string `json:"name"`
	Seconds        int64  `json:"seconds"`
	Requests       int64  `json:"requests"`
	Tokens         int64  `json:"tokens"`
	BudgetRequests int64  `json:"budget_requests,omitempty"`
	BudgetTokens   int64  `json:"budget_tokens,omitempty"`
}

func costToJSON(c itemCost) *costJSON {
	j := &costJSON{EstimatedTokens: c.EstimatedTokens, MaxTokens: c.MaxTokens, ReservedTokens: c.ReservedTokens,
		Windows: make([]windowJSON, len(c.Windows)), BudgetLeft: leftOf(c.Windows)}
	for i, w := range c.Windows {
		j.Windows[i] = windowJSON{Name: w.Name, Seconds: int64(w.Duration.Seconds()), Requests: w.Requests, Tokens: w.Tokens,
			BudgetRequests: w.BudgetRequests, BudgetTokens: w.BudgetTokens}
	}
	return j
}
