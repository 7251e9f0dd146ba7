package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestBudgetLeft: what is left is each limit's budget less its window's
// use, never below 0; where several windows limit the same thing the
// tightest wins (the shorter on a tie); a server without limits has no
// budget left to show ("—").
func TestBudgetLeft(t *testing.T) {
	minute := func(requests, tokens, budgetRequests int64) CostWindow {
		return CostWindow{Name: "minute", Duration: time.Minute, Requests: requests, Tokens: tokens, BudgetRequests: budgetRequests}
	}
	hour := func(requests, tokens, budgetTokens int64) CostWindow {
		return CostWindow{Name: "hour", Duration: time.Hour, Requests: requests, Tokens: tokens, BudgetTokens: budgetTokens}
	}
	day := func(requests, tokens, budgetRequests, budgetTokens int64) CostWindow {
		return CostWindow{Name: "day", Duration: 24 * time.Hour, Requests: requests, Tokens: tokens, BudgetRequests: budgetRequests, BudgetTokens: budgetTokens}
	}
	cases := []struct {
		name    string
		windows []CostWindow
		want    *BudgetLeft
		text    string
	}{
		{name: "no windows", windows: nil, want: nil, text: "—"},
		{name: "no budget in any window", windows: []CostWindow{minute(2, 340, 0), hour(2, 340, 0), day(2, 340, 0, 0)}, want: nil, text: "—"},
		{name: "hourly tokens", windows: []CostWindow{minute(2, 340, 0), hour(2, 340, 1000)},
			want: &BudgetLeft{Tokens: &LimitLeft{Window: "hour", Left: 660, Budget: 1000}}, text: "660 tok/hour"},
		{name: "burst per minute", windows: []CostWindow{minute(2, 340, 3), hour(2, 340, 0)},
			want: &BudgetLeft{Requests: &LimitLeft{Window: "minute", Left: 1, Budget: 3}}, text: "1 req/minute"},
		{name: "both", windows: []CostWindow{minute(2, 340, 3), hour(2, 340, 1000)},
			want: &BudgetLeft{Tokens: &LimitLeft{Window: "hour", Left: 660, Budget: 1000}, Requests: &LimitLeft{Window: "minute", Left: 1, Budget: 3}},
			text: "660 tok/hour, 1 req/minute"},
		{name: "spent exactly", windows: []CostWindow{minute(3, 1000, 3), hour(3, 1000, 1000)},
			want: &BudgetLeft{Tokens: &LimitLeft{Window: "hour", Left: 0, Budget: 1000}, Requests: &LimitLeft{Window: "minute", Left: 0, Budget: 3}},
			text: "0 tok/hour, 0 req/minute"},
		{name: "overspent is 0, never negative", windows: []CostWindow{minute(9, 1500, 3), hour(9, 1500, 1000)},
			want: &BudgetLeft{Tokens: &LimitLeft{Window: "hour", Left: 0, Budget: 1000}, Requests: &LimitLeft{Window: "minute", Left: 0, Budget: 3}},
			text: "0 tok/hour, 0 req/minute"},
		{name: "the longer window is tighter", windows: []CostWindow{hour(2, 300, 1000), day(4, 4950, 0, 5000)},
			want: &BudgetLeft{Tokens: &LimitLeft{Window: "day", Left: 50, Budget: 5000}}, text: "50 tok/day"},
		{name: "the shorter window is tighter", windows: []CostWindow{hour(2, 900, 1000), day(4, 1000, 0, 5000)},
			want: &BudgetLeft{Tokens: &LimitLeft{Window: "hour", Left: 100, Budget: 1000}}, text: "100 tok/hour"},
		{name: "a tie goes to the shorter window", windows: []CostWindow{hour(2, 900, 1000), day(4, 4900, 0, 5000)},
			want: &BudgetLeft{Tokens: &LimitLeft{Window: "hour", Left: 100, Budget: 1000}}, text: "100 tok/hour"},
		{name: "requests in two windows", windows: []CostWindow{minute(2, 0, 3), day(3, 0, 5, 0)},
			want: &BudgetLeft{Requests: &LimitLeft{Window: "minute", Left: 1, Budget: 3}}, text: "1 req/minute"},
		{name: "requests tighter over the day", windows: []CostWindow{minute(2, 0, 3), day(7, 0, 7, 0)},
			want: &BudgetLeft{Requests: &LimitLeft{Window: "day", Left: 0, Budget: 7}}, text: "0 req/day"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := LeftOf(c.windows)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("LeftOf (-want +got):\n%s", diff)
			}
			if s := got.String(); s != c.text {
				t.Errorf("String() = %q, want %q", s, c.text)
			}
		})
	}
}

// TestCostIsInert: the cost block and the budget column print the
// server's name and the windows' names through inert, had someone written
// escapes into the store or the configuration; the numbers are the
// firewall's own.
func TestCostIsInert(t *testing.T) {
	bad := "peer\x1b[2J\x1b[H\u202e\xff\nReview rv-0000000000000000"
	it := review.Item{ID: "rv-0123456789abcdef", Server: bad, State: review.StatePending, Stage: review.StageRequest,
		Request: json.RawMessage(`{"maxTokens":10,"messages":[]}`), ExpiresAt: time.Now().Add(time.Minute)}
	c := Cost{EstimatedTokens: 3, MaxTokens: 10, Windows: []CostWindow{
		{Name: "minute", Duration: time.Minute, Requests: 1, BudgetRequests: 3},
		{Name: "w\x1b]0;owned\x07", Duration: time.Hour, Tokens: 10, BudgetTokens: 100},
	}}
	var show bytes.Buffer
	Show(&show, it, ShowOptions{Now: time.Now(), Cost: &c})
	rendertest.CheckInert(t, "show's cost", show.String())
	for _, want := range []string{`Usage of peer\x1b[2J\x1b[H\u202e\xff\nReview rv-0000000000000000 now`, `budget left: 90 tok/"w\x1b]0;owned\x07", 2 req/minute`} {
		if !strings.Contains(show.String(), want) {
			t.Errorf("show does not say %q:\n%s", want, show.String())
		}
	}
	var list bytes.Buffer
	List(&list, []review.Item{it}, map[string]*BudgetLeft{bad: LeftOf(c.Windows)}, time.Now())
	rendertest.CheckInert(t, "list's budget column", list.String())
	if want := `90 tok/"w\x1b]0;owned\x07", 2 req/minute`; !strings.Contains(list.String(), want) {
		t.Errorf("list does not say %q:\n%s", want, list.String())
	}
}
