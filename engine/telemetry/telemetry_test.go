package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
)

// TestNilMetricsRecordNothing: every recording method is safe on nil, so
// the engine and relay need no metrics in tests and CLI paths.
func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.Decided(Decision{Server: "a", Kind: "sampling", Stage: "request", Outcome: "pass"})
	m.HostAnswered("a", "sampling", "ok", time.Second)
	m.ReviewSettled("a", "request", "approved", time.Second)
	m.Refused("a", "limits.max_in_flight")
	m.UpstreamStarted("a")
	m.UpstreamStartFailed("a", ReasonStartFailed)
	m.UpstreamLost("a")
	m.UpstreamClosed("a")
	m.UpstreamLostClosed("a")
	m.SetSources(Sources{})
	if m.Upstreams() != nil {
		t.Error("nil Metrics reported upstreams")
	}
}

// TestLabelsBounded: names and words outside the config and the fixed
// vocabularies are recorded as other (or the vocabulary's catch-all),
// never as given.
func TestLabelsBounded(t *testing.T) {
	const hostile = "evil\x1b[31m-canary"
	m := New(Options{Servers: []string{"alpha"}, Windows: []string{"minute"}})
	m.Decided(Decision{Server: hostile, Kind: "sampling", Stage: "request", Outcome: hostile, Eval: time.Millisecond})
	m.Decided(Decision{Server: "alpha", Kind: "sampling", Stage: "request", Outcome: "pass"})
	m.HostAnswered(hostile, "sampling", hostile, time.Second)
	m.ReviewSettled(hostile, "request", hostile, time.Second)
	m.Refused(hostile, hostile)
	m.UpstreamStarted(hostile)
	for _, tc := range []struct {
		name, metric string
		labels       map[string]string
		want         float64
	}{
		{"unknown server and outcome", "mcpxfw_decisions_total", map[string]string{"server": "other", "kind": "sampling", "stage": "request", "outcome": "error"}, 1},
		{"configured server", "mcpxfw_decisions_total", map[string]string{"server": "alpha", "kind": "sampling", "stage": "request", "outcome": "pass"}, 1},
		{"review outcome", "mcpxfw_review_outcomes_total", map[string]string{"server": "other", "stage": "request", "outcome": "error"}, 1},
		{"refusal limit", "mcpxfw_refusals_total", map[string]string{"server": "other", "limit": "other"}, 1},
		{"upstream", "mcpxfw_upstream_starts_total", map[string]string{"server": "other", "result": "ok"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := counterValue(t, m, tc.metric, tc.labels); got != tc.want {
				t.Errorf("%s%v = %v, want %v", tc.metric, tc.labels, got, tc.want)
			}
		})
	}
	body := scrape(t, m)
	if strings.Contains(body, "canary") || strings.Contains(body, "evil") {
		t.Errorf("an unconfigured name reached the exposition:\n%s", body)
	}
}

// TestExpositionLints: what /metrics serves passes promlint.
func TestExpositionLints(t *testing.T) {
	m := New(Options{Servers: []string{"alpha", "beta"}, Windows: []string{"hour", "minute"}})
	m.SetSources(Sources{
		Policy:        func() Policy { return Policy{Revision: "abc", Reloads: map[string]int64{"ok": 1}} },
		DecisionLog:   func() []LogSink { return []LogSink{{Sink: "file", Written: 3}} },
		InputsDropped: func() uint64 { return 4 },
		Pending: func(context.Context) ([]Pending, error) {
			return []Pending{{Server: "alpha", Stage: "request", Count: 2, Oldest: time.Now().Add(-time.Minute)}}, nil
		},
		Usage: func(context.Context, string) (map[string]Usage, error) {
			return map[string]Usage{"minute": {Requests: 1, Tokens: 10}, "hour": {Requests: 2}}, nil
		},
	})
	m.Decided(Decision{Server: "alpha", Kind: "sampling", Stage: "request", Outcome: "pass", Validate: time.Microsecond, Eval: time.Microsecond, Commit: time.Millisecond})
	problems, err := promlint.NewWithMetricFamilies(gather(t, m)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	if got := counterValue(t, m, "mcpxfw_reviews_pending", map[string]string{"server": "alpha", "stage": "request"}); got != 2 {
		t.Errorf("mcpxfw_reviews_pending{alpha,request} = %v, want 2", got)
	}
	if got := counterValue(t, m, "mcpxfw_replay_inputs_dropped_total", map[string]string{}); got != 4 {
		t.Errorf("mcpxfw_replay_inputs_dropped_total = %v, want 4", got)
	}
}

// TestDeadStoreIsAMetric: a store that does not answer within the timeout
// is mcpxfw_store_up 0 and /readyz 503 naming the store, not a failed or
// hung scrape.
func TestDeadStoreIsAMetric(t *testing.T) {
	m := New(Options{Servers: []string{"alpha"}, StoreTimeout: 50 * time.Millisecond})
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	m.SetSources(Sources{
		Policy:   func() Policy { return Policy{Revision: "abc"} },
		Pending:  func(ctx context.Context) ([]Pending, error) { return nil, hang(ctx) },
		Writable: hang,
	})
	if got := counterValue(t, m, "mcpxfw_store_up", nil); got != 0 {
		t.Errorf("mcpxfw_store_up = %v, want 0", got)
	}
	code, body := get(t, m, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "store:") {
		t.Errorf("/readyz = %d %q, want 503 naming the store", code, body)
	}
}

// TestReadyzNamesDownUpstream: a lost session makes its server down until
// the link holding it closes; a start after that is a restart.
func TestReadyzNamesDownUpstream(t *testing.T) {
	m := New(Options{Servers: []string{"alpha", "beta"}})
	m.SetSources(Sources{Policy: func() Policy { return Policy{Revision: "abc"} }, Pending: func(context.Context) ([]Pending, error) { return nil, nil },
		Writable: func(context.Context) error { return nil }})
	m.UpstreamStarted("alpha")
	m.UpstreamStarted("beta")
	if code, body := get(t, m, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d %q, want 200", code, body)
	}
	m.UpstreamLost("beta")
	code, body := get(t, m, "/readyz?format=json")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"upstream beta"`) || strings.Contains(body, `"upstream alpha",
      "ok": false`) {
		t.Errorf("/readyz after beta was lost = %d %s", code, body)
	}
	if !strings.Contains(body, "(down since ") {
		t.Errorf("/readyz does not say since when beta is down: %s", body)
	}
	ups := m.Upstreams()
	if ups[1].Up || ups[1].DownSince == nil || ups[0].DownSince != nil {
		t.Errorf("status upstreams after beta was lost: %+v; want beta down since a time, alpha up without one", ups)
	}
	m.UpstreamLostClosed("beta")
	m.UpstreamStarted("beta")
	if ups := m.Upstreams(); ups[1].DownSince != nil {
		t.Errorf("beta restarted, still down since %v", ups[1].DownSince)
	}
	if code, body := get(t, m, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after beta restarted = %d %q", code, body)
	}
	if got := counterValue(t, m, "mcpxfw_upstream_restarts_total", map[string]string{"server": "beta"}); got != 1 {
		t.Errorf("restarts of beta = %v, want 1", got)
	}
}

// TestHealthz is alive whatever the store does.
func TestHealthz(t *testing.T) {
	m := New(Options{})
	m.SetSources(Sources{Writable: func(context.Context) error { return errors.New("down") }})
	if code, body := get(t, m, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
}

func get(t *testing.T, m *Metrics, path string) (int, string) {
	t.Helper()
	code, _, body := getAs(m, Everyone, path)
	return code, body
}

// getAs serves path to a request access judges; it returns the code, the
// WWW-Authenticate challenge and the body.
func getAs(m *Metrics, access func(*http.Request) Access, path string) (int, string, string) {
	rec := httptest.NewRecorder()
	m.Handler(access).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, rec.Header().Get("WWW-Authenticate"), string(b)
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	code, body := get(t, m, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	return body
}

func gather(t *testing.T, m *Metrics) []*dto.MetricFamily {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// counterValue is the value of one series (a counter or gauge) of name.
func counterValue(t *testing.T, m *Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	for _, mf := range gather(t, m) {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			if labelsMatch(s.GetLabel(), labels) {
				if s.GetCounter() != nil {
					return s.GetCounter().GetValue()
				}
				return s.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// labelsMatch reports whether a series has exactly the labels want.
func labelsMatch(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}

// BenchmarkDecided is what recording one decision costs the hot path:
// a map read and array indexing, no allocation.
func BenchmarkDecided(b *testing.B) {
	m := New(Options{Servers: []string{"alpha", "beta"}})
	d := Decision{Server: "beta", Kind: "sampling", Stage: "result", Outcome: "pass", Validate: time.Microsecond, Eval: 50 * time.Microsecond, Commit: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		m.Decided(d)
	}
}

// TestReadyzFloodSharesOneProbe: however many readiness checks come at
// once, one write probe runs and its answer serves them all, and serves
// the checks after it until it is probeReuse old: a flood of /readyz
// never queues probes behind the decisions' writes.
func TestReadyzFloodSharesOneProbe(t *testing.T) {
	m := New(Options{Servers: []string{"alpha"}})
	m.probe.reuse = time.Hour // every check below falls within one answer's life
	var probes atomic.Int32
	release := make(chan struct{})
	m.SetSources(Sources{Policy: func() Policy { return Policy{Revision: "abc"} },
		Writable: func(context.Context) error { probes.Add(1); <-release; return nil }})
	var wg sync.WaitGroup
	codes := make(chan int, 50)
	for range 50 {
		wg.Go(func() { code, _ := get(t, m, "/readyz"); codes <- code })
	}
	for probes.Load() == 0 {
		runtime.Gosched() // the first check has started the probe
	}
	close(release)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("/readyz = %d during the flood, want 200", code)
		}
	}
	if n := probes.Load(); n != 1 {
		t.Errorf("%d write probes for 50 concurrent checks, want 1", n)
	}
	m.probe.mu.Lock()
	m.probe.at = time.Now().Add(-2 * time.Hour) // the answer has aged out
	m.probe.mu.Unlock()
	if code, _ := get(t, m, "/readyz"); code != http.StatusOK || probes.Load() != 2 {
		t.Errorf("after the answer aged: /readyz %d with %d probes, want 200 and a second probe", code, probes.Load())
	}
}
