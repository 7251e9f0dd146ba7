package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/logship"
	"github.com/mcpx-fw/mcpx-fw/engine/logship/collector"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// decideBenchText is prose without secret words, so the benchmark measures
// the policy's ordinary path.
const decideBenchText = "The reviewer reads the change, notes what it does and why, and asks for a test where one is missing. "

// decideBenchRequest is a chat of n messages of size bytes of text each,
// alternating user and assistant and ending with the user.
func decideBenchRequest(tb testing.TB, n, size int) []byte {
	tb.Helper()
	text := strings.Repeat(decideBenchText, size/len(decideBenchText)+1)[:size]
	msgs := make([]any, n)
	for i := range msgs {
		role := "user"
		if (n-1-i)%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]any{"role": role, "content": map[string]any{"type": "text", "text": text}}
	}
	raw, err := json.Marshal(map[string]any{"messages": msgs, "maxTokens": 1000,
		"systemPrompt": "You review pull requests. Be concise and kind."})
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

var decideBenchShapes = []struct {
	name    string
	n, size int
}{
	{"1msg", 1, 60},
	{"10x400B", 10, 400},
	{"40x1KB", 40, 1024},
}

// BenchmarkDecide measures one decision on the shipped policy for three
// request sizes, each in several ways in the same run:
//
//   - validate+decide: what Preview does (validation, input document,
//     conversion, evaluation, decoding) with usage given, so the store is
//     not read. This is the decision proper.
//   - eval-only: the evaluation inside validate+decide alone, on the
//     input validate+decide built: what the engine's way of asking OPA
//     costs, against the naive path's way.
//   - naive-evalinput: the same policy prepared from the same files, asked
//     with rego.EvalInput on the already built input map: no validation,
//     but OPA's own JSON round trip of the map on every call.
//   - validate+decide+log: validate+decide plus the masked decision-log
//     event encoded to io.Discard.
//   - log-only: that masked event alone, for the decision validate+decide
//     made: what masking and encoding cost.
//   - log+ship-only: log-only with the service sink on as well: the same
//     event handed to OPA's decision-log plugin (its buffer; uploads wait
//     an hour, so no upload runs during the benchmark).
//   - decide-store and decide-store+log: the whole Decide, reading usage
//     from and committing to a real SQLite store, without and with the
//     decision log; decide-store+metrics, with the Prometheus metrics
//     recording it (what the hot path pays for them). Usage rows accumulate as they would under that load;
//     a read sums a bounded number of buckets however many there are.
//   - validate+decide+log+shadow and decide-store+log+shadow:
//     validate+decide+log and decide-store+log with a shadow policy (the
//     shipped one again) judging every decision on its worker, which then
//     writes the log line: what a shadow adds to the decision the
//     upstream waits for, back to back: the shadow competes for the CPU
//     with the next decision. shadow-dropped/op is the share of decisions
//     the shadow's queue was too full to take. validate+decide+log+shadow-paced
//     times each decision alone and lets the shadow judge it before the
//     next (untimed), as decisions spaced by a host's round trips are.
//   - log+shadow-handoff-only: what logDecision costs the decision with a
//     shadow (its job queued, the worker woken), paced as above: against
//     log-only, which it no longer pays inline.
//
// Each reports decisions/s, and p50-µs and p99-µs from per-iteration
// timings. Run with -cpu 1 for per-core figures.
func BenchmarkDecide(b *testing.B) {
	e := benchEngine(b, Config{})
	naive := naiveDecisionQuery(b)
	usage := Usage{"minute": review.Usage{Requests: 1}, "hour": review.Usage{Requests: 1, Tokens: 1000}}
	for _, shape := range decideBenchShapes {
		s := sampling("github-mcp", string(decideBenchRequest(b, shape.n, shape.size)))
		b.Run(shape.name+"/validate+decide", func(b *testing.B) {
			timeDecisions(b, func() { e.Preview(b.Context(), StageRequest, s, nil, usage) })
		})
		_, input := e.Preview(b.Context(), StageRequest, s, nil, usage)
		b.Run(shape.name+"/eval-only", func(b *testing.B) {
			p := e.policy.Load()
			timeDecisions(b, func() {
				if _, err := p.Evaluate(b.Context(), input); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(shape.name+"/naive-evalinput", func(b *testing.B) {
			timeDecisions(b, func() {
				if _, err := naive.Eval(b.Context(), rego.EvalInput(input)); err != nil {
					b.Fatal(err)
				}
			})
		})
		logged := newDecisionLog(io.Discard, nil, false, nil, nil)
		b.Run(shape.name+"/validate+decide+log", func(b *testing.B) {
			timeDecisions(b, func() {
				as := e.assess(b.Context(), StageRequest, s, nil, nil, usage)
				logged.write(as.verdict, as.input, e.Revision(), as.timings.metrics(), trace.SpanContext{})
			})
		})
		as := e.assess(b.Context(), StageRequest, s, nil, nil, usage)
		shadowDecide := func(e *Engine) {
			as := e.assess(b.Context(), StageRequest, s, nil, nil, usage)
			e.logDecision(b.Context(), &as, s, nil)
		}
		b.Run(shape.name+"/validate+decide+log+shadow", func(b *testing.B) { benchShadowed(b, shadowDecide) })
		b.Run(shape.name+"/validate+decide+log+shadow-paced", func(b *testing.B) { benchShadowPaced(b, shadowDecide) })
		b.Run(shape.name+"/log+shadow-handoff-only", func(b *testing.B) {
			benchShadowPaced(b, func(e *Engine) {
				as := as // the decision validate+decide made, handed over as logDecision hands it
				e.logDecision(b.Context(), &as, s, nil)
			})
		})
		b.Run(shape.name+"/log-only", func(b *testing.B) {
			timeDecisions(b, func() { logged.write(as.verdict, as.input, e.Revision(), as.timings.metrics(), trace.SpanContext{}) })
		})
		shipped := newDecisionLog(io.Discard, benchShipper(b), false, nil, nil)
		b.Run(shape.name+"/log+ship-only", func(b *testing.B) {
			timeDecisions(b, func() { shipped.write(as.verdict, as.input, e.Revision(), as.timings.metrics(), trace.SpanContext{}) })
		})
		for _, withLog := range []bool{false, true} {
			name := shape.name + "/decide-store"
			cfg := Config{}
			if withLog {
				name, cfg.DecisionLog = name+"+log", io.Discard
			}
			cfg.Policy.Data = unlimitedBudget(b)
			full := benchEngine(b, cfg)
			b.Run(name, func(b *testing.B) {
				timeDecisions(b, func() { full.Decide(b.Context(), s) })
			})
		}
		b.Run(shape.name+"/decide-store+log+shadow", func(b *testing.B) {
			benchShadowed(b, func(e *Engine) { e.Decide(b.Context(), s) })
		})
		metered := Config{Metrics: telemetry.New(telemetry.Options{Servers: []string{"github-mcp"}})}
		metered.Policy.Data = unlimitedBudget(b)
		withMetrics := benchEngine(b, metered)
		b.Run(shape.name+"/decide-store+metrics", func(b *testing.B) {
			timeDecisions(b, func() { withMetrics.Decide(b.Context(), s) })
		})
	}
}

// benchShadowed times decide on an engine logging to io.Discard with the
// shipped policy as its shadow too, back to back (the shadow competing
// for the CPU), and reports the share of decisions the shadow dropped.
func benchShadowed(b *testing.B, decide func(*Engine)) {
	e := shadowBenchEngine(b)
	timeDecisions(b, func() { decide(e) })
	e.Close()
	st, _ := e.ShadowStatus()
	b.ReportMetric(float64(st.Dropped)/float64(max(b.N, 1)), "shadow-dropped/op")
}

// benchShadowPaced times decide alone, then waits, untimed, until the
// shadow has judged it: decisions spaced as a host's round trips space
// them, the shadow keeping up.
func benchShadowPaced(b *testing.B, decide func(*Engine)) {
	e := shadowBenchEngine(b)
	defer e.Close()
	b.ReportAllocs()
	var took []time.Duration
	for b.Loop() {
		t0 := time.Now()
		decide(e)
		took = append(took, time.Since(t0))
		for shadowJudged(e) < len(took) {
			runtime.Gosched()
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(percentile(took, 50).Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(percentile(took, 99).Nanoseconds())/1e3, "p99-µs")
}

// shadowJudged is how many decisions the shadow has judged or dropped,
// read without allocating (garbage made while waiting would be collected
// during the timed decisions).
func shadowJudged(e *Engine) int {
	sh := e.shadow
	sh.mu.Lock()
	defer sh.mu.Unlock()
	n := sh.tally.Dropped
	for _, c := range sh.tally.Compared {
		n += c
	}
	return int(n)
}

// shadowBenchEngine is benchEngine logging to io.Discard, with the
// shipped policy as its shadow.
func shadowBenchEngine(b *testing.B) *Engine {
	cfg := Config{DecisionLog: io.Discard, Shadow: &PolicyConfig{Dir: shippedPolicies, Data: unlimitedBudget(b)}}
	cfg.Policy.Data = unlimitedBudget(b)
	return benchEngine(b, cfg)
}

// benchShipper is a service sink whose uploads never come during a
// benchmark; its buffer drops the oldest events once full, as it would.
func benchShipper(b *testing.B) *logship.Shipper {
	col := collector.New()
	b.Cleanup(col.Close)
	ship, err := logship.Start(b.Context(), logship.Config{URL: col.URL, MinDelay: time.Hour, MaxDelay: time.Hour}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ship.Stop(time.Second) })
	return ship
}

// BenchmarkDecideContended measures whole decisions (Decide on a real
// SQLite store, the 10x400B request) from parallel goroutines, each of
// which reads usage, evaluates and commits in its server's turn: on one
// server (every decision waits for the one before it), on a server per
// goroutine (no waiting for a turn), and on one server shared by two
// engines with their own Stores on one state dir (two serve processes; on
// PostgreSQL, with MCPXFW_TEST_STORE_URL, two replicas).
// Each reports decisions/s; -cpu sets the goroutines.
func BenchmarkDecideContended(b *testing.B) {
	params := string(decideBenchRequest(b, 10, 400))
	data := fixtureData(b)
	servers := data["servers"].(map[string]any)
	for i := range 64 {
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"budget": map[string]any{"hourly_tokens": 1 << 50, "burst_per_minute": 1 << 30}}
	}
	run := func(b *testing.B, engines []*Engine, server func() string) {
		var next atomic.Int64
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			e, s := engines[int(next.Add(1))%len(engines)], sampling(server(), params)
			for pb.Next() {
				if v := e.Decide(b.Context(), s); v.Outcome != OutcomePass {
					b.Errorf("%s: %v %v", s.Server.Name, v.Outcome, v.ReasonCodes())
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
	}
	b.Run("one-server", func(b *testing.B) {
		run(b, []*Engine{benchEngine(b, Config{Policy: PolicyConfig{Data: data}})}, func() string { return "s0" })
	})
	b.Run("servers", func(b *testing.B) {
		var n atomic.Int64
		run(b, []*Engine{benchEngine(b, Config{Policy: PolicyConfig{Data: data}})},
			func() string { return fmt.Sprintf("s%d", n.Add(1)%64) })
	})
	b.Run("two-processes", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "state")
		engines := make([]*Engine, 2)
		for i := range engines {
			engines[i] = benchEngineOn(b, Config{Policy: PolicyConfig{Data: data}}, dir)
		}
		run(b, engines, func() string { return "s0" })
	})
}

// benchEngine is an engine on the shipped policy and a fresh store that
// logs nothing, so the service log does not weigh on the figures.
func benchEngine(b *testing.B, cfg Config) *Engine {
	b.Helper()
	return benchEngineOn(b, cfg, filepath.Join(b.TempDir(), "state"))
}

// benchEngineOn is benchEngine on the store in dir, or on the PostgreSQL
// database storeURLEnv names.
func benchEngineOn(b *testing.B, cfg Config, dir string) *Engine {
	b.Helper()
	if cfg.Policy.Data == nil {
		cfg.Policy.Data = fixtureData(b)
	}
	cfg.Policy.Dir = shippedPolicies
	cfg.ReviewTimeout = time.Minute
	store, err := review.Open(dir, zap.NewNop())
	if u := os.Getenv(storeURLEnv); u != "" {
		store, err = review.OpenURL(b.Context(), u, zap.NewNop())
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	e, err := New(b.Context(), cfg, store, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// unlimitedBudget is the fixture configuration with a budget for
// github-mcp that thousands of decisions a second never reach, so the
// store benchmarks keep deciding pass while the budget rules still run
// against real usage.
func unlimitedBudget(b *testing.B) map[string]any {
	data := fixtureData(b)
	server := data["servers"].(map[string]any)["github-mcp"].(map[string]any)
	server["budget"] = map[string]any{"hourly_tokens": 1 << 50, "burst_per_minute": 1 << 30}
	return data
}

// timeDecisions runs op b.N times, timing each call, and reports
// throughput and the 50th and 99th percentile latencies.
func timeDecisions(b *testing.B, op func()) {
	b.ReportAllocs()
	took := make([]time.Duration, 0, b.N)
	start := time.Now()
	for b.Loop() {
		t0 := time.Now()
		op()
		took = append(took, time.Since(t0))
	}
	total := time.Since(start)
	slices.Sort(took)
	b.ReportMetric(float64(len(took))/total.Seconds(), "decisions/s")
	b.ReportMetric(float64(percentile(took, 50).Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(percentile(took, 99).Nanoseconds())/1e3, "p99-µs")
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// naiveDecisionQuery prepares data.mcpxfw.decision the way the OPA docs'
// first example does: rego.Load over the policy directory and the
// configuration as a store, no sandbox, no schema, no strictness.
func naiveDecisionQuery(tb testing.TB) rego.PreparedEvalQuery {
	tb.Helper()
	skip := func(_ string, info fs.FileInfo, depth int) bool {
		return policyFilter(false)("", info, depth)
	}
	ctx := tb.Context()
	store := inmem.NewFromObject(map[string]any{"mcpxfw": map[string]any{"config": fixtureData(tb)}})
	txn := storage.NewTransactionOrDie(ctx, store, storage.WriteParams)
	q, err := rego.New(rego.Query("data.mcpxfw.decision"), rego.Load([]string{shippedPolicies}, skip),
		rego.Store(store), rego.Transaction(txn)).PrepareForEval(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if err := store.Commit(ctx, txn); err != nil {
		tb.Fatal(err)
	}
	return q
}

// BenchmarkDecideElicitation measures one elicitation decision on the
// shipped policy (validation, facts, evaluation, as Preview decides) for a
// four-field form and a URL request, and the form's masked log event.
func BenchmarkDecideElicitation(b *testing.B) {
	e := benchEngine(b, Config{})
	usage := Usage{"minute": review.Usage{Requests: 1}, "hour": review.Usage{Requests: 1}}
	for _, c := range []struct{ name, params string }{{"form", formParams}, {"url", urlParams}} {
		s := kindRequest(KindElicitation, "everything", c.params)
		if v, _ := e.Preview(b.Context(), StageRequest, s, nil, usage); len(v.Violations) > 0 {
			b.Fatalf("%s: %v", c.name, v.Violations)
		}
		b.Run(c.name+"/validate+decide", func(b *testing.B) {
			timeDecisions(b, func() { e.Preview(b.Context(), StageRequest, s, nil, usage) })
		})
		v, input := e.Preview(b.Context(), StageRequest, s, nil, usage)
		b.Run(c.name+"/log-only", func(b *testing.B) {
			d := newDecisionLog(io.Discard, nil, false, nil, zap.NewNop())
			timeDecisions(b, func() { d.write(v, input, "rev", nil, trace.SpanContext{}) })
		})
	}
}
