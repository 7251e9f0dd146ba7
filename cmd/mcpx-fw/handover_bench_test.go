package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// handoverRetries is how many retries of each kind one iteration of
// BenchmarkHandover times.
const handoverRetries = 100

// BenchmarkHandover is P8's neighbour: what handing a bridged call's
// retry to the replica holding it adds to the retry, on a PostgreSQL
// store (a throwaway cluster; skipped without PostgreSQL). Two `serve
// --http` replicas share the store and the seal key; a 2026-07-28 host
// calls the sample tool of a legacy upstream (a push the policy permits),
// through a front that sends every first call to the first replica and
// the retry to that same replica (same-…) or to the other (handover-…),
// in turn. The figure is the retry's time at the front, from its request
// to the end of its answer, p50 and p99, nearest rank; added-… are the
// differences. Run with -benchtime 1x: each iteration
// times 100 retries of each kind.
func BenchmarkHandover(b *testing.B) {
	storeURL := newDatabase(b)
	key := filepath.Join(b.TempDir(), "seal.key")
	if err := os.WriteFile(key, bytes.Repeat([]byte{7}, 32), 0o600); err != nil {
		b.Fatal(err)
	}
	upstream := buildBenchUpstream(b)
	urls := []string{startBenchReplica(b, storeURL, key, upstream), startBenchReplica(b, storeURL, key, upstream)}
	f := newRetryFront(b, urls)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, err := peer.ConnectHTTP(ctx, f.srv.URL+"/mcp", peer.HostOptions{ProtocolVersion: "2026-07-28",
		Answer: answerWith(`{"role":"assistant","model":"m","content":{"type":"text","text":"ok"}}`)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	var same, handedOver []time.Duration
	for b.Loop() {
		for i := range 2 * handoverRetries {
			f.setElsewhere(i%2 == 1)
			if _, err := h.CallTool(ctx, "sample", map[string]any{"params": json.RawMessage(plainRequest)}); err != nil {
				b.Fatal(err)
			}
			took := f.lastRetry(b)
			if i%2 == 1 {
				handedOver = append(handedOver, took)
			} else {
				same = append(same, took)
			}
		}
	}
	if f.retries[0] != len(same) || f.retries[1] != len(handedOver) {
		b.Fatalf("retries sent to each replica: %v; want %d and %d", f.retries, len(same), len(handedOver))
	}
	ms := func(ds []time.Duration, p int) float64 {
		sorted := slices.Sorted(slices.Values(ds))
		i := (len(sorted)*p + 99) / 100
		return float64(sorted[min(max(i-1, 0), len(sorted)-1)].Microseconds()) / 1e3
	}
	b.ReportMetric(ms(same, 50), "same-p50-ms")
	b.ReportMetric(ms(same, 99), "same-p99-ms")
	b.ReportMetric(ms(handedOver, 50), "handover-p50-ms")
	b.ReportMetric(ms(handedOver, 99), "handover-p99-ms")
	b.ReportMetric(ms(handedOver, 50)-ms(same, 50), "added-p50-ms")
	b.ReportMetric(ms(handedOver, 99)-ms(same, 99), "added-p99-ms")
}

// buildBenchUpstream builds the test upstream for the benchmark.
func buildBenchUpstream(tb testing.TB) string {
	tb.Helper()
	upstream := filepath.Join(tb.TempDir(), "upstream")
	if out, err := exec.Command("go", "build", "-o", upstream, "../../testdata/upstream").CombinedOutput(); err != nil {
		tb.Fatalf("build test upstream: %v\n%s", err, out)
	}
	return upstream
}

// startBenchReplica starts one `serve --http` on storeURL with the seal
// key at key and upstream as its legacy server "bench", and returns its
// URL.
func startBenchReplica(tb testing.TB, storeURL, key, upstream string) string {
	tb.Helper()
	dir := tb.TempDir()
	policies, err := filepath.Abs("../../policies")
	if err != nil {
		tb.Fatal(err)
	}
	cfg := fmt.Sprintf(`state_dir: %q
policy: {dir: %q, timeout: 5s}
review: {timeout: 10m}
sampling: {host_timeout: 30s}
servers:
  bench: {command: [%q], label: Benchmark upstream, max_tokens: 4096, protocol: legacy}
decision_log: {sink: %q}
log: {file: %q}
store: {url: %q}
seal: {key_file: %q}
limits: {max_bridged_calls: 100000, max_bridged_calls_per_server: 100000}
`, filepath.Join(dir, "state"), policies, upstream, filepath.Join(dir, "decisions.jsonl"), filepath.Join(dir, "serve.log"), storeURL, key)
	path := filepath.Join(dir, "mcpx-fw.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(benchBinary(), "serve", "--config", path, "--http", "127.0.0.1:0")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "mcpx-fw: listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, pipe) }()
			return u
		}
	}
	tb.Fatalf("serve --http printed no listening line")
	return ""
}

// retryFront sends every request to the first replica, and a retry (a
// request carrying a requestState) to the second when elsewhere is set;
// it times each retry from its request to the end of its answer.
type retryFront struct {
	srv       *httptest.Server
	proxies   []*httputil.ReverseProxy
	mu        sync.Mutex
	elsewhere bool
	retries   [2]int             // retries sent to each replica
	took      chan time.Duration // each retry's time, as it ends
}

func newRetryFront(tb testing.TB, urls []string) *retryFront {
	tb.Helper()
	f := &retryFront{took: make(chan time.Duration, 1)}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			tb.Fatal(err)
		}
		f.proxies = append(f.proxies, &httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.URL.Path = u.Path
		}})
	}
	f.srv = httptest.NewServer(f)
	tb.Cleanup(f.srv.Close)
	return f
}

func (f *retryFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := readAllBody(r)
	r.Body = bodyOf(body)
	retry := bytes.Contains(body, []byte(`"requestState"`))
	f.mu.Lock()
	i := 0
	if retry && f.elsewhere {
		i = 1
	}
	if retry {
		f.retries[i]++
	}
	f.mu.Unlock()
	start := time.Now()
	f.proxies[i].ServeHTTP(w, r)
	if retry {
		f.took <- time.Since(start)
	}
}

func (f *retryFront) setElsewhere(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.elsewhere = on
}

// lastRetry is the time the last call's retry took: the front's proxy
// may return a moment after the host has read the answer.
func (f *retryFront) lastRetry(tb testing.TB) time.Duration {
	tb.Helper()
	select {
	case d := <-f.took:
		return d
	case <-time.After(10 * time.Second):
		tb.Fatal("the call made no retry")
		return 0
	}
}
