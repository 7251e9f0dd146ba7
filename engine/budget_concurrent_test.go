package engine

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestBudgetExactUnderConcurrency is many requests for the last tokens of
// one budget at once, decided by three engines on three Stores sharing one
// store (three serve processes on one state dir; with
// MCPXFW_TEST_STORE_URL, three replicas on that PostgreSQL database), each
// deciding from many goroutines: exactly as many pass as the budget holds,
// every other one is denied for the budget, and the stored usage is
// exactly what those decisions charged. Without a critical section from
// the usage read to the commit, several requests read the same usage and
// all spend the last tokens.
func TestBudgetExactUnderConcurrency(t *testing.T) {
	const fit, perEngine, maxTokens = 5, 8, 1000
	server := "budget-" + newDecisionID() // its own usage, in a database other runs share
	data := map[string]any{"default": "review", "servers": map[string]any{
		server: map[string]any{"max_tokens": 4096, "budget": map[string]any{"hourly_tokens": fit * maxTokens}},
	}}
	engines, store := sharedEngines(t, 3, Config{Policy: PolicyConfig{Data: data}})
	s := sampling(server, textParams("Summarise this diff", maxTokens))
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, e := range engines {
		for range perEngine {
			wg.Go(func() {
				<-start
				v := e.Decide(t.Context(), s)
				key := v.Outcome.String()
				if v.Outcome == OutcomeBlocker && !slices.Equal(v.ReasonCodes(), []string{"budget-exhausted"}) {
					key += " " + v.Reasons[0].Code
				}
				mu.Lock()
				outcomes[key]++
				mu.Unlock()
			})
		}
	}
	close(start)
	wg.Wait()
	total := len(engines) * perEngine
	want := map[string]int{"pass": fit, "blocker": total - fit}
	if outcomes["pass"] != want["pass"] || outcomes["blocker"] != want["blocker"] || len(outcomes) != 2 {
		t.Errorf("outcomes %v, want %v (blockers all budget-exhausted)", outcomes, want)
	}
	hour := usageOf(t, store, server)
	wantUsage := review.Usage{Requests: int64(total), RequestedTokens: int64(outcomes["pass"]) * maxTokens, Tokens: int64(outcomes["pass"]) * maxTokens}
	if hour != wantUsage {
		t.Errorf("hour usage %+v, want %+v (the charges of the decisions made)", hour, wantUsage)
	}
	if hour.Tokens > fit*maxTokens {
		t.Errorf("the budget of %d tokens was overspent: %d reserved", fit*maxTokens, hour.Tokens)
	}
}

// storeURLEnv names a PostgreSQL database (a postgres:// URL) the tests
// that share a store among engines run against instead of a SQLite file.
const storeURLEnv = "MCPXFW_TEST_STORE_URL"

// sharedEngines starts n engines on cfg, each with its own Store on one
// shared state dir, as n serve processes sharing a queue are (or on the
// database storeURLEnv names, as n replicas); it returns them and the
// first engine's Store.
func sharedEngines(t *testing.T, n int, cfg Config) ([]*Engine, *review.Store) {
	t.Helper()
	cfg.Policy.Dir, cfg.ReviewTimeout = shippedPolicies, time.Minute
	dir := filepath.Join(t.TempDir(), "state")
	open := func() (*review.Store, error) { return review.Open(dir, zaptest.NewLogger(t)) }
	if u := os.Getenv(storeURLEnv); u != "" {
		open = func() (*review.Store, error) { return review.OpenURL(t.Context(), u, zaptest.NewLogger(t)) }
	}
	var engines []*Engine
	var first *review.Store
	for range n {
		store, err := open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		e, err := New(t.Context(), cfg, store, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
		if first == nil {
			first = store
		}
	}
	return engines, first
}
