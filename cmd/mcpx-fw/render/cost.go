package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// Cost is what a review item may cost and what its server has spent:
// the facts an operator weighs beside the approve button. Every way of
// deciding (review show, the console) shows these numbers, so they are
// made here once.
type Cost struct {
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
	Windows []CostWindow
}

// CostWindow is a server's usage within one sliding window ending now,
// and the budget configured for that window.
type CostWindow struct {
	Name     string
	Duration time.Duration
	// Requests and Tokens are what input.usage.<window> shows the policy:
	// requests counted, and tokens charged against the budget.
	Requests, Tokens int64
	// BudgetRequests and BudgetTokens are the limits in this window, 0 for
	// none (as the server's budget sets them).
	BudgetRequests, BudgetTokens int64
}

// CostOf is the cost of it: its request's facts, and windows, its
// server's usage now against its budget. An erased request has no text
// left to count: its tokens are 0.
func CostOf(it review.Item, windows []CostWindow) Cost {
	c := Cost{Windows: windows}
	if it.ErasedAt.IsZero() && ItemKind(it) == engine.KindSampling {
		facts := engine.Facts(engine.KindSampling, decodeObject(it.Request), nil)
		c.EstimatedTokens, c.MaxTokens = factInt(facts["estimated_tokens"]), factInt(facts["max_tokens"])
		c.ReservedTokens = engine.Reservation(facts).Tokens
	}
	return c
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

// BudgetLeft is what a server may still spend before its budget acts, as
// the shipped policy applies it: tokens until budget-exhausted denies a
// request whose reservation (its prompt's estimate and its maxTokens) does
// not fit in them, requests until burst holds
// every further one for review. Where several windows limit the same
// thing, the tightest (the least left; the shorter window on a tie) is
// what is left. A limit already passed leaves 0. nil: no budget.
type BudgetLeft struct {
	Tokens   *LimitLeft `json:"tokens,omitempty"`
	Requests *LimitLeft `json:"requests,omitempty"`
}

// LimitLeft is one limit's remainder and the window it is counted in.
type LimitLeft struct {
	Window string `json:"window"`
	Left   int64  `json:"left"`
	Budget int64  `json:"budget"`
}

// LeftOf is what is left of the budgets in ws (shortest window first), nil
// when no window has one.
func LeftOf(ws []CostWindow) *BudgetLeft {
	var b BudgetLeft
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
func tighter(cur *LimitLeft, window string, budget, used int64) *LimitLeft {
	if budget <= 0 {
		return cur
	}
	l := &LimitLeft{Window: window, Left: max(budget-used, 0), Budget: budget}
	if cur != nil && cur.Left <= l.Left {
		return cur
	}
	return l
}

// String is the list's BUDGET LEFT cell: "3900 tok/hour, 3 req/minute",
// or "—" for no budget.
func (b *BudgetLeft) String() string {
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

// renderCost prints what letting it through may cost, just before the
// commands to act: what the request has the model read (estimated) and
// write (maxTokens), and what the two reserve against the budget (sampling
// alone costs tokens), then its server's usage now in every window against
// its budget, and what is left of that budget.
func renderCost(w io.Writer, it review.Item, c Cost) {
	fmt.Fprintln(w)
	if ItemKind(it) == engine.KindSampling {
		fmt.Fprintf(w, "Tokens:   ~%d to read (estimated) + maxTokens %d = %d reserved\n", c.EstimatedTokens, c.MaxTokens, c.ReservedTokens)
	}
	left := LeftOf(c.Windows)
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

// CostJSON is show --json's "cost": Cost with the budget left.
type CostJSON struct {
	EstimatedTokens int64        `json:"estimated_tokens"`
	MaxTokens       int64        `json:"max_tokens"`
	ReservedTokens  int64        `json:"reserved_tokens"`
	Windows         []WindowJSON `json:"windows"`
	BudgetLeft      *BudgetLeft  `json:"budget_left"`
}

// WindowJSON is one usage window; a budget of 0 (no limit) is left out.
type WindowJSON struct {
	Name           string `json:"name"`
	Seconds        int64  `json:"seconds"`
	Requests       int64  `json:"requests"`
	Tokens         int64  `json:"tokens"`
	BudgetRequests int64  `json:"budget_requests,omitempty"`
	BudgetTokens   int64  `json:"budget_tokens,omitempty"`
}

func costToJSON(c Cost) *CostJSON {
	j := &CostJSON{EstimatedTokens: c.EstimatedTokens, MaxTokens: c.MaxTokens, ReservedTokens: c.ReservedTokens,
		Windows: make([]WindowJSON, len(c.Windows)), BudgetLeft: LeftOf(c.Windows)}
	for i, w := range c.Windows {
		j.Windows[i] = WindowJSON{Name: w.Name, Seconds: int64(w.Duration.Seconds()), Requests: w.Requests, Tokens: w.Tokens,
			BudgetRequests: w.BudgetRequests, BudgetTokens: w.BudgetTokens}
	}
	return j
}
