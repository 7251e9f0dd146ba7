package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

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
	peerWindows := []render.CostWindow{
		{Name: "minute", Duration: time.Minute, Requests: 2, Tokens: 340, BudgetRequests: 3},
		{Name: "hour", Duration: time.Hour, Requests: 2, Tokens: 340, BudgetTokens: 1000},
		{Name: "day", Duration: 24 * time.Hour, Requests: 2, Tokens: 340},
	}
	zero := []render.CostWindow{{Name: "minute", Duration: time.Minute}, {Name: "hour", Duration: time.Hour}, {Name: "day", Duration: 24 * time.Hour}}
	cases := []struct {
		name string
		it   review.Item
		want render.Cost
	}{
		{name: "sampling", it: review.Item{Server: "peer", Request: json.RawMessage(text)},
			want: render.Cost{EstimatedTokens: 9, MaxTokens: 300, ReservedTokens: 309, Windows: peerWindows}}, // 36 bytes of text
		{name: "elicitation costs no tokens", it: review.Item{Server: "peer", Context: elicit, Request: json.RawMessage(`{"mode":"form","message":"Your name?","requestedSchema":{"type":"object"}}`)},
			want: render.Cost{Windows: peerWindows}},
		{name: "erased", it: review.Item{Server: "peer", Request: json.RawMessage(`{}`), ErasedAt: time.Now()},
			want: render.Cost{Windows: peerWindows}},
		{name: "no budget", it: review.Item{Server: "free", Request: json.RawMessage(`{"maxTokens":5,"messages":[]}`)},
			want: render.Cost{MaxTokens: 5, ReservedTokens: 5, Windows: zero}},
		{name: "server no longer configured", it: review.Item{Server: "gone", Request: json.RawMessage(`{"maxTokens":5,"messages":[]}`)},
			want: render.Cost{MaxTokens: 5, ReservedTokens: 5, Windows: zero}},
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
