package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// The flood: floodEach copies of a request the shipped policy holds for
// review and as many it lets through, each padded to about floodPad bytes,
// pushed at once by one upstream (about 60 MiB in all).
const (
	floodEach = 120
	floodPad  = 256 << 10
)

// floodLimits bound what each server may hold: 16 requests in flight, 8
// reviews, 8 MiB (two of the largest requests limits.max_bytes allows).
// Per host they are the same: serve over stdio has one host.
const floodLimits = `limits:
  max_in_flight: 16
  max_pending_reviews: 8
  max_held_bytes: 8388608
  max_in_flight_per_host: 16
  max_pending_reviews_per_host: 8
  max_held_bytes_per_host: 8388608
`

const (
	floodReviews   = 8       // limits.max_pending_reviews
	floodHeldBytes = 8 << 20 // limits.max_held_bytes, per server
	// serveMemoryLimit is GOMEMLIMIT as serve sets it (gctune.go).
	floodMemoryLimit = serveMemoryLimit
	// floodRSSSlack is what serve's resident memory may take beyond its
	// memory limit and the bytes it may hold for the two servers: what
	// GOMEMLIMIT does not count, which is the pages of the binary's code in
	// use (idle, serve is about 30 MiB resident with a heap of about 5) and
	// SQLite's memory (modernc.org/memory maps its own), and what the
	// collector lets pass the limit before it catches up on a busy machine.
	// Measured: 85-90 MiB at peak on 2 cores, busy or not; once 110 MiB
	// while other test runs loaded the machine. Without the limits the
	// same flood takes serve to about 150 MiB.
	floodRSSSlack = 32 << 20
)

// TestFloodIsBounded: one upstream's tool call pushes 240 large sampling
// requests at once, half of which the policy holds for review (decoys for
// the reviewer), half of which it lets through. serve holds no more than
// the limits allow: at most 8 of its reviews are ever pending, and every
// request past a limit is refused at once (before the operator acts on
// anything) with a -32603 naming the limit, counted and logged with the
// server and the limit. Meanwhile a second, well-behaved upstream's request
// is held for review and, approved, answered. serve's resident memory stays
// under its memory limit plus the bytes it may hold for the two servers
// plus floodRSSSlack, and the queue file grows only by what 9 reviews take.
func TestFloodIsBounded(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("reads serve's memory from /proc:", err)
	}
	peerLog := filepath.Join(t.TempDir(), "outcomes.jsonl") // each outcome, as the upstreams get it
	cfg := testConfig(t, repoPath(t, "policies"), 10*time.Minute, loadPeerServer("flood", peerLog)+loadPeerServer("good", peerLog))
	appendConfig(t, cfg, floodLimits)
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	pid := childPID(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if _, err := host.ToolNames(ctx); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, cfg)
	before, queueBefore := readProcStatus(t, pid), queueSize(t, cfg)

	w := watchFlood(t, st, pid, cfg)
	start := time.Now()
	flooded := make(chan floodResult, 1)
	go func() { flooded <- flood(ctx, host) }()
	waitFor(t, "the flood's first review", func() bool { return w.pendingNow("flood") > 0 })

	// The well-behaved upstream asks while the flood comes in, and while
	// the flood's reviews hold every place it has.
	good := make(chan error, 1)
	go func() { good <- sampleGood(ctx, host) }()
	waitFor(t, "the good upstream's review", func() bool { return w.pendingNow("good") == 1 })
	approveServer(t, st, "good")
	if err := <-good; err != nil {
		t.Errorf("the good upstream's request: %v", err)
	}
	// The log has the good upstream's outcome too, one line.
	t.Logf("the good upstream was answered with %d of the flood's %d requests answered", lineCount(peerLog)-1, 2*floodEach)

	// Nobody decides a flood review until every request but those reviews
	// has had its answer: the refusals cannot have waited for one.
	waitFor(t, "an answer to every request not held for review", func() bool { return lineCount(peerLog)-1 == 2*floodEach-floodReviews })
	if n := w.pendingNow("flood"); n != floodReviews {
		t.Fatalf("%d of the flood's reviews pending, want %d", n, floodReviews)
	}
	operatorAt := time.Since(start)
	for _, it := range w.pendingItems("flood") {
		if _, err := st.Reject(ctx, it.ID, "test-operator", "flood"); err != nil {
			t.Fatal(err)
		}
	}
	res := <-flooded
	during := w.stop()
	if res.err != nil {
		t.Fatal(res.err)
	}
	after := readProcStatus(t, pid)

	res.check(t, operatorAt)
	budget := int64(floodMemoryLimit + 2*floodHeldBytes + floodRSSSlack)
	t.Logf("serve RSS before the flood %s, at most %s during it (VmHWM %s), after %s; allowed %s (GOMEMLIMIT %s + 2 × %s held + %s slack)",
		mib(before.rss), mib(during.rss), mib(after.hwm), mib(after.rss), mib(budget), mib(floodMemoryLimit), mib(floodHeldBytes), mib(floodRSSSlack))
	if after.hwm > budget {
		t.Errorf("serve's peak RSS %s is over %s", mib(after.hwm), mib(budget))
	}
	if during.pending["flood"] > floodReviews || during.pending["good"] > 1 {
		t.Errorf("pending reviews reached %v; want at most %d of flood's and 1 of good's", during.pending, floodReviews)
	}
	all, err := st.List(ctx, review.Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := countServer(all, "flood"); n > floodReviews {
		t.Errorf("%d reviews were opened for the flood, want at most %d", n, floodReviews)
	}
	// Each review keeps its request twice (the text and the context the
	// firewall re-decides it from), in the database and, until a
	// checkpoint, in its write-ahead log; decisions and audit entries are
	// small.
	queueAllowed := queueBefore + int64(floodReviews+1)*2*2*(floodPad+4096) + 4<<20
	t.Logf("queue files: %s before, at most %s during the flood; allowed %s", mib(queueBefore), mib(during.queue), mib(queueAllowed))
	if during.queue > queueAllowed {
		t.Errorf("the queue files grew to %s, over %s", mib(during.queue), mib(queueAllowed))
	}
	_ = host.Close() // serve logs the refusals not yet counted in a line as it stops
	checkRefusalsLogged(t, filepath.Join(filepath.Dir(cfg), "serve.log"), res.limited)
	checkServeLog(t, filepath.Join(filepath.Dir(cfg), "serve.log"))
}

// loadPeerServer is the servers: entry for the test upstream with its load
// tools (sample_each), recording each outcome its pushes get in peerLog.
func loadPeerServer(name, peerLog string) string {
	return peerServer(name, 1000) + fmt.Sprintf("    env: {%s: \"1\", MCPXFW_PEER_LOG: %q}\n", peer.LoadEnv, peerLog)
}

// floodResult is what the flooding upstream's requests got.
type floodResult struct {
	out peer.LoadOutcomes
	err error
	// limited counts the refusals naming a limit.
	limited int
}

func flood(ctx context.Context, host *peer.Host) floodResult {
	res, err := host.CallTool(ctx, "flood__sample_each", map[string]any{
		"requests": []json.RawMessage{json.RawMessage(secretRequest), json.RawMessage(plainRequest)},
		"repeat":   floodEach, "pad": floodPad})
	if err != nil {
		return floodResult{err: err}
	}
	var r floodResult
	r.err = json.Unmarshal([]byte(res.Text), &r.out)
	return r
}

// check: every request got a completion, its review's rejection, or a
// limit's refusal, and every refusal came before the operator acted.
func (r *floodResult) check(t *testing.T, operatorAt time.Duration) {
	t.Helper()
	if len(r.out.Outcomes) != 2*floodEach || len(r.out.Millis) != 2*floodEach {
		t.Fatalf("%d outcomes, %d times; want %d", len(r.out.Outcomes), len(r.out.Millis), 2*floodEach)
	}
	var answered, rejected int
	var slowest int64
	for i, o := range r.out.Outcomes {
		switch {
		case o.Error == nil:
			answered++
		case o.Error.Code == -1:
			rejected++
		case o.Error.Code == -32603 && strings.HasPrefix(o.Error.Message, "limits.max_") && strings.Contains(o.Error.Message, "reached for server flood"):
			r.limited++
			slowest = max(slowest, r.out.Millis[i])
		default:
			t.Errorf("request %d got %d %q", i, o.Error.Code, o.Error.Message)
		}
	}
	t.Logf("flood: %d answered, %d rejected by the operator, %d refused by a limit (the slowest refusal after %dms; the operator acted after %v)",
		answered, rejected, r.limited, slowest, operatorAt.Milliseconds())
	if rejected > floodReviews || r.limited < floodEach-floodReviews {
		t.Errorf("%d rejected and %d refused by a limit; want at most %d and at least %d", rejected, r.limited, floodReviews, floodEach-floodReviews)
	}
	if slowest >= operatorAt.Milliseconds() {
		t.Errorf("a refusal took %dms, after the operator acted (%v): not at once", slowest, operatorAt)
	}
}

// sampleGood has the well-behaved upstream ask for a completion its review
// must approve.
func sampleGood(ctx context.Context, host *peer.Host) error {
	res, err := host.CallTool(ctx, "good__sample", map[string]any{"params": json.RawMessage(secretRequest)})
	if err != nil {
		return err
	}
	var out peer.SampleOutcome
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		return err
	}
	if out.Error != nil || !strings.Contains(string(out.Completion), "the host's answer") {
		return fmt.Errorf("got %+v, want the host's answer", out)
	}
	return nil
}

func approveServer(t *testing.T, st *review.Store, server string) {
	t.Helper()
	items, err := st.List(t.Context(), review.Filter{Server: server})
	if err != nil || len(items) != 1 {
		t.Fatalf("%s's pending reviews: %d, %v", server, len(items), err)
	}
	if _, err := st.Approve(t.Context(), items[0].ID, "test-operator", ""); err != nil {
		t.Fatal(err)
	}
}

func countServer(items []review.Item, server string) int {
	n := 0
	for _, it := range items {
		if it.Server == server {
			n++
		}
	}
	return n
}

// floodWatch samples, every few milliseconds, serve's pending reviews per
// server, its resident memory and the size of its queue files, keeping
// the largest of each.
type floodWatch struct {
	mu   sync.Mutex
	now  map[string][]review.Item
	peak floodPeak
	done chan struct{}
	wg   sync.WaitGroup
}

type floodPeak struct {
	pending map[string]int
	rss     int64
	queue   int64
}

func watchFlood(t *testing.T, st *review.Store, pid int, cfg string) *floodWatch {
	w := &floodWatch{now: map[string][]review.Item{}, peak: floodPeak{pending: map[string]int{}}, done: make(chan struct{})}
	w.wg.Go(func() {
		for {
			items, err := st.List(context.Background(), review.Filter{})
			status, statusErr := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			q := queueSizeOf(cfg)
			w.mu.Lock()
			if err == nil {
				w.now = map[string][]review.Item{}
				for _, it := range items {
					w.now[it.Server] = append(w.now[it.Server], it)
				}
				for s, its := range w.now {
					w.peak.pending[s] = max(w.peak.pending[s], len(its))
				}
			}
			if statusErr == nil {
				w.peak.rss = max(w.peak.rss, statusField(status, "VmRSS"))
			}
			w.peak.queue = max(w.peak.queue, q)
			w.mu.Unlock()
			select {
			case <-w.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	return w
}

func (w *floodWatch) pendingNow(server string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.now[server])
}

func (w *floodWatch) pendingItems(server string) []review.Item {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now[server]
}

func (w *floodWatch) stop() floodPeak {
	close(w.done)
	w.wg.Wait()
	return w.peak
}

// statusField reads a size in kB from /proc/<pid>/status, in bytes.
func statusField(status []byte, key string) int64 {
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte(key+":")); ok {
			f := strings.Fields(string(rest))
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// queueSize is the size of the review store's files (database, WAL,
// shared memory) in cfg's state dir.
func queueSize(t *testing.T, cfg string) int64 {
	t.Helper()
	return queueSizeOf(cfg)
}

func queueSizeOf(cfg string) int64 {
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(cfg), "state", review.FileName+"*"))
	var n int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// lineCount counts the lines of the file at path; 0 if there is none.
func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// waitFor polls cond until it holds, or fails the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// checkRefusalsLogged: serve logged the refusals with the server and the
// limit, fewer lines than refusals (a flood of refusals is not a flood of
// log lines), and their count adds up.
func checkRefusalsLogged(t *testing.T, path string, refused int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, counted := 0, 0
	for line := range bytes.Lines(b) {
		var l struct {
			Msg, Server, Limit string
			Refused            int
		}
		if json.Unmarshal(line, &l) != nil || !strings.HasPrefix(l.Msg, "upstream request") || !strings.Contains(l.Msg, "refused: limit reached") {
			continue
		}
		lines++
		counted += l.Refused
		if l.Server != "flood" || !strings.HasPrefix(l.Limit, "limits.max_") {
			t.Errorf("refusal logged for server %q, limit %q; want flood and a limits key", l.Server, l.Limit)
		}
	}
	if lines == 0 || lines >= refused || counted != refused {
		t.Errorf("%d refusals logged in %d lines that count %d; want fewer lines than refusals, counting all", refused, lines, counted)
	}
}

// TestShutdownAbandonsPendingReviews: serve stopped (SIGTERM) while many
// requests wait on reviews settles every one before it closes the review
// store: each review ends abandoned, with its audit entry, each upstream
// request gets -32603 saying so, and serve logs no error. Over stdio the
// host stays connected (serve stops on the signal alone); over HTTP it
// keeps its session and event stream open.
func TestShutdownAbandonsPendingReviews(t *testing.T) {
	for _, topo := range []string{"stdio", "http"} {
		t.Run(topo, func(t *testing.T) { shutdownUnderLoad(t, topo == "http") })
	}
}

func shutdownUnderLoad(t *testing.T, overHTTP bool) {
	const n = 24
	peerLog := filepath.Join(t.TempDir(), "outcomes.jsonl")
	cfg := testConfig(t, repoPath(t, "policies"), 10*time.Minute, loadPeerServer("peer", peerLog))
	appendConfig(t, cfg, unlimited)
	var host *peer.Host
	var pid int
	if overHTTP {
		s := startHTTPServe(t, cfg)
		h, err := peer.ConnectHTTP(t.Context(), s.url, peer.HostOptions{Answer: answerWith(hostAnswer)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		host, pid = h.Host, s.cmd.Process.Pid
	} else {
		host = startFirewall(t, cfg, answerWith(hostAnswer))
		pid = host.PID()
	}
	go func() {
		_, _ = host.CallTool(context.Background(), "sample_each", map[string]any{
			"requests": []json.RawMessage{json.RawMessage(secretRequest)}, "repeat": n})
	}()
	waitPendingCount(t, cfg, n)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "serve to exit after SIGTERM", func() bool { return exited(pid) })
	if !overHTTP {
		_ = host.Disconnect() // reaps it
	}

	st := openStore(t, cfg)
	items, err := st.List(t.Context(), review.Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.Audit(t.Context(), review.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	events := map[string][]review.Event{}
	for _, e := range entries {
		events[e.ItemID] = append(events[e.ItemID], e.Event)
	}
	for _, it := range items {
		if it.State != review.StateAbandoned || it.Note != review.NoteCancelled {
			t.Errorf("review %s is %s (%q) after shutdown; want abandoned by serve (%q)", it.ID, it.State, it.Note, review.NoteCancelled)
		}
		if got := events[it.ID]; len(got) != 2 || got[1] != review.EventAbandoned {
			t.Errorf("review %s has audit events %v; want opened, abandoned", it.ID, got)
		}
	}
	if len(items) != n {
		t.Errorf("%d reviews, want %d", len(items), n)
	}
	waitFor(t, "every request's answer in the upstream's log", func() bool { return lineCount(peerLog) == n })
	b, _ := os.ReadFile(peerLog)
	for line := range bytes.Lines(b) {
		var o peer.SampleOutcome
		if err := json.Unmarshal(line, &o); err != nil || o.Error == nil || o.Error.Code != -32603 || !strings.Contains(o.Error.Message, "review abandoned") {
			t.Errorf("the upstream got %s; want -32603 saying the review was abandoned", bytes.TrimSpace(line))
		}
	}
	checkServeLog(t, filepath.Join(filepath.Dir(cfg), "serve.log"))
}

// exited reports whether process pid has exited (a zombie its parent has
// not reaped yet, or gone).
func exited(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := bytes.Cut(stat, []byte(") "))
	return len(rest) > 0 && rest[0] == 'Z'
}
