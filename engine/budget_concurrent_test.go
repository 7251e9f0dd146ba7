package engine

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/review/pgtest"
)

// TestBudgetExactUnderConcurrency is many requests for the last tokens of
// budgets at once, decided by three engines on three Stores sharing one
// store (three serve processes on one state dir; three replicas on one
// PostgreSQL database, a throwaway cluster of pgtest's), each
// deciding from many goroutines, for several servers with a budget each:
// for every server exactly as many pass as its budget holds, every other
// request is denied for the budget, and the stored usage is exactly what
// those decisions charged. Without a critical section from the usage read
// to the commit, requests read the same usage and all spend the last
// tokens; several servers make that near certain in every run.
func TestBudgetExactUnderConcurrency(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		budgetExactUnderConcurrency(t, func() (*review.Store, error) { return review.Open(dir, zaptest.NewLogger(t)) })
	})
	t.Run("postgres", func(t *testing.T) {
		u := pgtest.New(t).URL("postgres")
		budgetExactUnderConcurrency(t, func() (*review.Store, error) { return review.OpenURL(t.Context(), u, zaptest.NewLogger(t)) })
	})
}

func budgetExactUnderConcurrency(t *testing.T, open func() (*review.Store, error)) {
	const servers, fit, perEngine, maxTokens = 6, 5, 4, 1000
	// cost is what each request reserves: "Summarise this diff" is 5
	// tokens to read.
	const cost = maxTokens + 5
	run := newDecisionID() // the servers' own usage, in a database other runs share
	names := make([]string, servers)
	config := map[string]any{}
	for i := range names {
		names[i] = fmt.Sprintf("budget-%d-%s", i, run)
		config[names[i]] = map[string]any{"max_tokens": 4096, "budget": map[string]any{"hourly_tokens": fit * cost}}
	}
	data := map[string]any{"default": "review", "servers": config}
	engines, store := sharedEngines(t, 3, Config{Policy: PolicyConfig{Data: data}}, open)
	var mu sync.Mutex
	outcomes := map[string]map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, name := range names {
		outcomes[name] = map[string]int{}
		s := sampling(name, textParams("Summarise this diff", maxTokens))
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
					outcomes[name][key]++
					mu.Unlock()
				})
			}
		}
	}
	close(start)
	wg.Wait()
	total := len(engines) * perEngine
	for _, name := range names {
		got := outcomes[name]
		if want := map[string]int{"pass": fit, "blocker": total - fit}; !maps.Equal(got, want) {
			t.Errorf("%s: outcomes %v, want %v (blockers all budget-exhausted)", name, got, want)
		}
		hour := usageOf(t, store, name)
		want := review.Usage{Requests: int64(total), RequestedTokens: int64(got["pass"]) * maxTokens, Tokens: int64(got["pass"]) * cost}
		if hour != want {
			t.Errorf("%s: hour usage %+v, want %+v (the charges of the decisions made)", name, hour, want)
		}
		if hour.Tokens > fit*cost {
			t.Errorf("%s: the budget of %d tokens was overspent: %d reserved", name, fit*cost, hour.Tokens)
		}
	}
}

// storeURLEnv names a PostgreSQL database (a postgres:// URL) the tests
// that share a store among engines run against instead of a SQLite file.
const storeURLEnv = "MCPXFW_TEST_STORE_URL"

// sharedEngines starts n engines on cfg, each with its own Store from
// open on one shared store, as n serve processes sharing a state dir, or n
// replicas sharing a database, are; it returns them and the first
// engine's Store.
func sharedEngines(t *testing.T, n int, cfg Config, open func() (*review.Store, error)) ([]*Engine, *review.Store) {
	t.Helper()
	cfg.Policy.Dir, cfg.ReviewTimeout = shippedPolicies, time.Minute
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
