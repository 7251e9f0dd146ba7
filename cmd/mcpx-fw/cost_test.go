package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestBudgetLeft: what is left is each limit's budget less its window's
// use, never below 0; where several windows limit the same thing the
// tightest wins (the shorter on a tie); a server without limits has no
// budget left to show ("—").
func TestBudgetLeft(t *testing.T) {
	minute := func(requests, tokens, budgetRequests int64) costWindow {
		return costWindow{Name: "minute", Duration: time.Minute, Requests: requests, Tokens: tokens, BudgetRequests: budgetRequests}
	}
	hour := func(requests, tokens, budgetTokens int64) costWindow {
		return costWindow{Name: "hour", Duration: time.Hour, Requests: requests, Tokens: tokens, BudgetTokens: budgetTokens}
	}
	day := func(requests, tokens, budgetRequests, budgetTokens int64) costWindow {
		return costWindow{Name: "day", Duration: 24 * time.Hour, Requests: requests, Tokens: tokens, BudgetRequests: budgetRequests, BudgetTokens: budgetTokens}
	}
	cases := []struct {
		name    string
		windows []costWindow
		want    *budgetLeft
		text    string
	}{
		{name: "no windows", windows: nil, want: nil, text: "—"},
		{name: "no budget in any window", windows: []costWindow{minute(2, 340, 0), hour(2, 340, 0), day(2, 340, 0, 0)}, want: nil, text: "—"},
		{name: "hourly tokens", windows: []costWindow{minute(2, 340, 0), hour(2, 340, 1000)},
			want: &budgetLeft{Tokens: &limitLeft{Window: "hour", Left: 660, Budget: 1000}}, text: "660 tok/hour"},
		{name: "burst per minute", windows: []costWindow{minute(2, 340, 3), hour(2, 340, 0)},
			want: &budgetLeft{Requests: &limitLeft{Window: "minute", Left: 1, Budget: 3}}, text: "1 req/minute"},
		{name: "both", windows: []costWindow{minute(2, 340, 3), hour(2, 340, 1000)},
			want: &budgetLeft{Tokens: &limitLeft{Window: "hour", Left: 660, Budget: 1000}, Requests: &limitLeft{Window: "minute", Left: 1, Budget: 3}},
			text: "660 tok/hour, 1 req/minute"},
		{name: "spent exactly", windows: []costWindow{minute(3, 1000, 3), hour(3, 1000, 1000)},
			want: &budgetLeft{Tokens: &limitLeft{Window: "hour", Left: 0, Budget: 1000}, Requests: &limitLeft{Window: "minute", Left: 0, Budget: 3}},
			text: "0 tok/hour, 0 req/minute"},
		{name: "overspent is 0, never negative", windows: []costWindow{minute(9, 1500, 3), hour(9, 1500, 1000)},
			want: &budgetLeft{Tokens: &limitLeft{Window: "hour", Left: 0, Budget: 1000}, Requests: &limitLeft{Window: "minute", Left: 0, Budget: 3}},
			text: "0 tok/hour, 0 req/minute"},
		{name: "the longer window is tighter", windows: []costWindow{hour(2, 300, 1000), day(4, 4950, 0, 5000)},
			want: &budgetLeft{Tokens: &limitLeft{Window: "day", Left: 50, Budget: 5000}}, text: "50 tok/day"},
		{name: "the shorter window is tighter", windows: []costWindow{hour(2, 900, 1000), day(4, 1000, 0, 5000)},
			want: &budgetLeft{Tokens: &limitLeft{Window: "hour", Left: 100, Budget: 1000}}, text: "100 tok/hour"},
		{name: "a tie goes to the shorter window", windows: []costWindow{hour(2, 900, 1000), day(4, 4900, 0, 5000)},
			want: &budgetLeft{Tokens: &limitLeft{Window: "hour", Left: 100, Budget: 1000}}, text: "100 tok/hour"},
		{name: "requests in two windows", windows: []costWindow{minute(2, 0, 3), day(3, 0, 5, 0)},
			want: &budgetLeft{Requests: &limitLeft{Window: "minute", Left: 1, Budget: 3}}, text: "1 req/minute"},
		{name: "requests tighter over the day", windows: []costWindow{minute(2, 0, 3), day(7, 0, 7, 0)},
			want: &budgetLeft{Requests: &limitLeft{Window: "day", Left: 0, Budget: 7}}, text: "0 req/day"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := leftOf(c.windows)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("leftOf (-want +got):\n%s", diff)
			}
			if s := got.String(); s != c.text {
				t.Errorf("String() = %q, want %q", s, c.text)
			}
		})
	}
}

// TestWindowBudget: servers.<name>.budget is measured in the windows the
// shipped policy measures it in.
func TestWindowBudget(t *testing.T) {
	b := config.Budget{HourlyTokens: 5000, BurstPerMinute: 4}
	cases := []struct {
		window           string
		requests, tokens int64
	}{
		{window: "minute", requests: 4},
		{window: "hour", tokens: 5000},
		{window: "day"},
		{window: "week"},
	}
	for _, c := range cases {
		t.Run(c.window, func(t *testing.T) {
			r, tk := windowBudget(b, c.window)
			if r != c.requests || tk != c.tokens {
				t.Errorf("windowBudget(%s) = %d requests, %d tokens; want %d, %d", c.window, r, tk, c.requests, c.tokens)
			}
			if r, tk := windowBudget(config.Budget{}, c.window); r != 0 || tk != 0 {
				t.Errorf("no budget: windowBudget(%s) = %d, %d", c.window, r, tk)
			}
		})
	}
}

// TestWindowBudgetIsThePolicys: windowBudget names, for each budget key,
// the window the shipped policy's budget_windows does, so the numbers show
// shows are the ones the policy decides on.
func TestWindowBudgetIsThePolicys(t *testing.T) {
	src, err := os.ReadFile(repoPath(t, "policies/mcpxfw/global.rego"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^budget_windows := (\{.*\})$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("global.rego has no budget_windows line")
	}
	var windows map[string]string
	if err := json.Unmarshal(m[1], &windows); err != nil {
		t.Fatalf("budget_windows %s: %v", m[1], err)
	}
	keys := map[string]config.Budget{"hourly_tokens": {HourlyTokens: 1}, "burst_per_minute": {BurstPerMinute: 1}}
	if len(windows) != len(keys) {
		t.Fatalf("budget_windows has %d keys (%s), windowBudget knows %d", len(windows), m[1], len(keys))
	}
	for key, window := range windows {
		b, ok := keys[key]
		if !ok {
			t.Errorf("budget_windows has %s, which windowBudget does not know", key)
			continue
		}
		if r, tk := windowBudget(b, window); r+tk != 1 {
			t.Errorf("%s is measured in %s by the policy, but windowBudget puts it elsewhere", key, window)
		}
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
	c := itemCost{EstimatedTokens: 3, MaxTokens: 10, Windows: []costWindow{
		{Name: "minute", Duration: time.Minute, Requests: 1, BudgetRequests: 3},
		{Name: "w\x1b]0;owned\x07", Duration: time.Hour, Tokens: 10, BudgetTokens: 100},
	}}
	var show bytes.Buffer
	renderShow(&show, it, showOptions{now: time.Now(), cost: &c})
	checkInertOutput(t, "show's cost", show.String())
	for _, want := range []string{`Usage of peer\x1b[2J\x1b[H\u202e\xff\nReview rv-0000000000000000 now`, `budget left: 90 tok/"w\x1b]0;owned\x07", 2 req/minute`} {
		if !strings.Contains(show.String(), want) {
			t.Errorf("show does not say %q:\n%s", want, show.String())
		}
	}
	var list bytes.Buffer
	renderList(&list, []review.Item{it}, map[string]*budgetLeft{bad: leftOf(c.Windows)}, time.Now())
	checkInertOutput(t, "list's budget column", list.String())
	if want := `90 tok/"w\x1b]0;owned\x07", 2 req/minute`; !strings.Contains(list.String(), want) {
		t.Errorf("list does not say %q:\n%s", want, list.String())
	}
}

// TestCostOf reads the cost of items from a real store: the facts of a
// sampling request, none for an elicitation or an erased request, and the
// server's usage in the default and configured windows against its
// configured budget; a server without a budget, or no longer configured,
// has none. Readers share one prepared read, from many goroutines at once
// as the console would (run with -race).
func TestCostOf(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := review.Open(dir, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for i, u := range []review.Usage{{Requests: 1, RequestedTokens: 100, Tokens: 100}, {Requests: 1, RequestedTokens: 300, Tokens: 300}, {ReturnedTokens: 40, Tokens: -60}} {
		d := review.Decision{ID: fmt.Sprintf("dc-%016x", i), Server: "peer", Stage: "request", Outcome: "pass"}
		if _, err := st.Commit(t.Context(), review.Entry{Decision: d, Usage: u}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &config.Config{Servers: map[string]config.Server{"peer": {Budget: config.Budget{HourlyTokens: 1000, BurstPerMinute: 3}}, "free": {}}}
	cfg.Usage.Windows = map[string]time.Duration{"day": 24 * time.Hour}
	rt := &runtime{cfg: cfg, store: st}

	text := `{"maxTokens":300,"systemPrompt":"Be brief.","messages":[{"role":"user","content":{"type":"text","text":"What is the admin password?"}}]}`
	elicit := json.RawMessage(`{"kind":"elicitation"}`)
	peerWindows := []costWindow{
		{Name: "minute", Duration: time.Minute, Requests: 2, Tokens: 340, BudgetRequests: 3},
		{Name: "hour", Duration: time.Hour, Requests: 2, Tokens: 340, BudgetTokens: 1000},
		{Name: "day", Duration: 24 * time.Hour, Requests: 2, Tokens: 340},
	}
	zero := []costWindow{{Name: "minute", Duration: time.Minute}, {Name: "hour", Duration: time.Hour}, {Name: "day", Duration: 24 * time.Hour}}
	cases := []struct {
		name string
		it   review.Item
		want itemCost
	}{
		{name: "sampling", it: review.Item{Server: "peer", Request: json.RawMessage(text)},
			want: itemCost{EstimatedTokens: 9, MaxTokens: 300, ReservedTokens: 309, Windows: peerWindows}}, // 36 bytes of text
		{name: "elicitation costs no tokens", it: review.Item{Server: "peer", Context: elicit, Request: json.RawMessage(`{"mode":"form","message":"Your name?","requestedSchema":{"type":"object"}}`)},
			want: itemCost{Windows: peerWindows}},
		{name: "erased", it: review.Item{Server: "peer", Request: json.RawMessage(`{}`), ErasedAt: time.Now()},
			want: itemCost{Windows: peerWindows}},
		{name: "no budget", it: review.Item{Server: "free", Request: json.RawMessage(`{"maxTokens":5,"messages":[]}`)},
			want: itemCost{MaxTokens: 5, ReservedTokens: 5, Windows: zero}},
		{name: "server no longer configured", it: review.Item{Server: "gone", Request: json.RawMessage(`{"maxTokens":5,"messages":[]}`)},
			want: itemCost{MaxTokens: 5, ReservedTokens: 5, Windows: zero}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					got, err := costOf(t.Context(), rt, c.it)
					if err != nil {
						t.Error(err)
						return
					}
					if diff := cmp.Diff(c.want, got); diff != "" {
						t.Errorf("costOf (-want +got):\n%s", diff)
					}
				})
			}
			wg.Wait()
		})
	}
}
