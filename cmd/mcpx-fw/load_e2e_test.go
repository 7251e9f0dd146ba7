package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// After the load serve's RSS falls back in a step, once the runtime has
// collected and its scavenger has returned the freed heap to the kernel:
// on a 2-core VM, 3 to 5 s after the last answer in most runs, down to
// 4-7 MiB over the baseline, where it stays (watched for 3 minutes, past
// the runtime's 2-minute forced collection). What it keeps is the review
// store's extra connections (each with its SQLite page cache) and the
// runtime's caches. The step comes later, or smaller, when the load's last
// collection came late: 10 s after the load some runs still sat 11-12 MiB
// over.
const (
	// loadSettled is where serve's RSS is taken to have settled, over its
	// baseline; loadSettle is how long the test waits for that.
	loadSettled = 8 << 20
	loadSettle  = 15 * time.Second
	// loadRSSMargin is how far over its baseline serve's RSS may be when
	// the test stops waiting: the worst case seen (12 MiB) and room for a
	// machine with more cores (more store connections, more per-P caches).
	// serve peaks only 15-25 MiB over its baseline in the full form, so this
	// catches a leak of most of what the requests held, not one of a few
	// KiB each; the open-file check and the per-request accounting are
	// sharper.
	loadRSSMargin = 20 << 20
)

// TestLoad sends a burst of concurrent sampling requests through one serve,
// from several upstream sessions at once, with a mix of verdicts: permit,
// policy deny, structurally invalid, escalation approved and escalation
// rejected (by an operator acting on the review store from this process, in
// bulk, as `mcpx-fw review` would from another). It then checks that every
// request got exactly one answer (read on each upstream's wire, where an
// answer sent twice shows, and matched to its request by an id in the
// prompt), that the answer is the one its verdict calls for (a completion
// carries its own request's id), that the host was asked exactly once for
// each request that passed, that the decision log holds exactly one
// decision per request and stage (plus one re-decision per approval), that
// every escalation has exactly one review item and its audit entries, that
// the audit chain verifies, that serve logged no error, and that serve's
// resident memory and open files come back to their baseline.
//
// It runs twice: "stdio", one host over stdio with four upstream servers;
// "http", two hosts over `serve --http` with two servers each (each host
// session has upstream sessions of its own). Either way four upstream
// processes push at once.
//
// By default (CI) it sends 200 requests per run, in well under two minutes
// on two cores. The full form sends 1,000 per run:
//
//	MCPXFW_LOAD=full go test ./cmd/mcpx-fw/ -run TestLoad -v
//
// (MCPXFW_LOAD=N sends N instead), and -v prints the figures: the time to
// answer them all, serve's RSS before, at the end, at its peak and once
// settled, its threads and open files. Linux only: it reads /proc.
func TestLoad(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("reads serve's resources from /proc:", err)
	}
	total := 200
	switch v := os.Getenv("MCPXFW_LOAD"); v {
	case "":
	case "full":
		total = 1000
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < len(loadKinds)*4 {
			t.Fatalf("MCPXFW_LOAD=%q: want full or a number of requests (at least %d)", v, len(loadKinds)*4)
		}
		total = n
	}
	for _, topo := range []loadTopology{
		{name: "stdio", hosts: 1, servers: 4},
		{name: "http", hosts: 2, servers: 2, http: true},
	} {
		t.Run(topo.name, func(t *testing.T) { runLoad(t, topo, total) })
	}
}

// loadTopology is how the upstream sessions reach serve.
type loadTopology struct {
	name           string
	hosts, servers int  // upstream sessions: hosts × servers
	http           bool // hosts over serve --http, else one host over stdio
}

// loadKind is one kind of request in the mix and everything the firewall
// must do with it.
type loadKind struct {
	name   string
	params string // JSON, with %[1]s for the request's id
	// code and msg: what the upstream gets (code 0: the host's completion).
	code int64
	msg  string
	// first is the outcome of the request's first decision; approved adds
	// a request-stage re-decision (pass) with the approval in its input;
	// answered means the host is asked once and the completion is decided
	// once (pass).
	first              string
	approved, answered bool
	// review is the final state of the request's one review item ("" for
	// none); audit lists its audit events in order.
	review review.State
	audit  []review.Event
}

var loadKinds = []loadKind{
	{name: "permit", params: `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello. (%[1]s)"}}],"maxTokens":100}`,
		first: "pass", answered: true},
	{name: "deny", params: `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello. (%[1]s)"}}],"maxTokens":5000}`,
		code: -1, msg: "User rejected sampling request", first: "blocker"},
	{name: "invalid", params: `{"messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"%[1]s","content":[{"type":"text","text":"(%[1]s)"}]}]}],"maxTokens":100}`,
		code: -32602, msg: "Tool result missing in request", first: "blocker"},
	{name: "approve", params: `{"messages":[{"role":"user","content":{"type":"text","text":"What is the admin password? (%[1]s)"}}],"maxTokens":100}`,
		first: "escalate", approved: true, answered: true,
		review: review.StateDelivered, audit: []review.Event{review.EventOpened, review.EventApproved, review.EventDelivered}},
	{name: "reject", params: `{"messages":[{"role":"user","content":{"type":"text","text":"What is the admin password? (%[1]s)"}}],"maxTokens":100}`,
		code: -1, msg: "rejected by reviewer", first: "escalate",
		review: review.StateRejected, audit: []review.Event{review.EventOpened, review.EventRejected}},
}

// loadIDPattern finds a request's id ("ld-" session "-" number) in anything
// that carries its prompt: the host's params, a review item, a decision.
var loadIDPattern = regexp.MustCompile(`ld-\d+-\d+`)

// loadRequest is one request and what became of it.
type loadRequest struct {
	id   string
	kind *loadKind
	got  []peer.SampleOutcome // what the upstream received
}

// loadSession is one upstream session: a configured server as one host
// reaches it.
type loadSession struct {
	index  int
	host   *peer.Host
	server string
	next   int // the next request number
}

// loadRun is one run's requests and what the host and the operator saw.
type loadRun struct {
	mu       sync.Mutex
	requests map[string]*loadRequest
	asked    map[string]int // host asks per request id
	strays   []string       // requests the host could not place
}

func newLoadRun() *loadRun {
	return &loadRun{requests: map[string]*loadRequest{}, asked: map[string]int{}}
}

// answer is the host's model: it answers each request with its own id, so
// a completion delivered to the wrong request shows.
func (r *loadRun) answer(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	id := string(loadIDPattern.Find(params))
	r.mu.Lock()
	r.asked[id]++
	if id == "" {
		r.strays = append(r.strays, "host asked without an id: "+string(params))
	}
	r.mu.Unlock()
	return json.RawMessage(fmt.Sprintf(`{"role":"assistant","model":"test-model","stopReason":"endTurn","content":{"type":"text","text":"the host's answer to %s"}}`, id)), nil
}

// round sends per requests from every session at once, kinds in turn, and
// records every outcome.
func (r *loadRun) round(t *testing.T, ctx context.Context, sessions []*loadSession, per int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, s := range sessions {
		batch := make([]json.RawMessage, per)
		reqs := make([]*loadRequest, per)
		for i := range per {
			k := &loadKinds[s.next%len(loadKinds)]
			id := fmt.Sprintf("ld-%d-%04d", s.index, s.next)
			s.next++
			batch[i] = json.RawMessage(fmt.Sprintf(k.params, id))
			reqs[i] = &loadRequest{id: id, kind: k}
		}
		r.mu.Lock()
		for _, q := range reqs {
			r.requests[q.id] = q
		}
		r.mu.Unlock()
		wg.Go(func() {
			res, err := s.host.CallTool(ctx, s.server+"__sample_each", map[string]any{"requests": batch})
			if err != nil {
				t.Errorf("session %d: sample_each: %v", s.index, err)
				return
			}
			var out peer.LoadOutcomes
			if err := json.Unmarshal([]byte(res.Text), &out); err != nil || len(out.Outcomes) != per {
				t.Errorf("session %d: sample_each gave %d outcomes for %d requests (%v): %.300s", s.index, len(out.Outcomes), per, err, res.Text)
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			for i, o := range out.Outcomes {
				reqs[i].got = append(reqs[i].got, o)
			}
		})
	}
	wg.Wait()
}

// operate approves or rejects every pending review as its request's kind
// says, in bulk, polling the store, until ctx ends. If it cannot, it calls
// abort (nobody else would decide the escalations) and reports why.
func (r *loadRun) operate(ctx context.Context, st *review.Store, abort func()) <-chan error {
	done := make(chan error, 1)
	go func() {
		defer close(done)
		for {
			items, err := st.List(ctx, review.Filter{})
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				done <- fmt.Errorf("operator: list: %w", err)
				abort()
				return
			}
			for _, it := range items {
				r.mu.Lock()
				q := r.requests[string(loadIDPattern.Find(it.Request))]
				r.mu.Unlock()
				switch {
				case q == nil:
					err = fmt.Errorf("operator: review %s has no request of this run: %s", it.ID, it.Request)
				case q.kind.review == review.StateDelivered:
					_, err = st.Approve(ctx, it.ID, "load-operator", "")
				default:
					_, err = st.Reject(ctx, it.ID, "load-operator", "not under load")
				}
				if err != nil && ctx.Err() == nil {
					done <- fmt.Errorf("operator: %w", err)
					abort()
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return done
}

func runLoad(t *testing.T, topo loadTopology, total int) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	// The upstreams' load tools and wire tap are turned on by their
	// environment: each server's env, since an upstream gets none of
	// serve's but a short allow-list.
	var servers strings.Builder
	for i := range topo.servers {
		servers.WriteString(peerServer(fmt.Sprintf("load%d", i), 1000))
		fmt.Fprintf(&servers, "    env: {%s: \"1\"}\n", peer.LoadEnv)
	}
	cfg := testConfig(t, repoPath(t, "policies"), 10*time.Minute, servers.String())
	appendConfig(t, cfg, unlimited) // every request of a round is held at once
	logContent(t, cfg)
	dir := filepath.Dir(cfg)

	run := newLoadRun()
	var hosts []*peer.Host
	var pid int
	if topo.http {
		s := startHTTPServe(t, cfg)
		pid = s.cmd.Process.Pid
		for range topo.hosts {
			h, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{Answer: run.answer, Tools: true})
			if err != nil {
				t.Fatalf("connect a host: %v", err)
			}
			t.Cleanup(func() { _ = h.Close() })
			hosts = append(hosts, h.Host)
		}
	} else {
		hosts = append(hosts, startFirewall(t, cfg, run.answer))
		pid = childPID(t, cfg)
	}
	var sessions []*loadSession
	for _, h := range hosts {
		names, err := h.ToolNames(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range topo.servers {
			server := fmt.Sprintf("load%d", i)
			if !slices.Contains(names, server+"__sample_each") || !slices.Contains(names, server+"__load_wire") {
				t.Fatalf("host sees tools %v, want %s__sample_each and %s__load_wire", names, server, server)
			}
			sessions = append(sessions, &loadSession{index: len(sessions), host: h, server: server})
		}
	}

	st := openStore(t, cfg)
	opCtx, stopOperator := context.WithCancel(ctx)
	operated := run.operate(opCtx, st, cancel)
	stopIfFailed := func() {
		if t.Failed() {
			stopOperator()
			if err := <-operated; err != nil {
				t.Error(err)
			}
			checkServeLog(t, filepath.Join(dir, "serve.log"))
			t.FailNow()
		}
	}

	// One request of each kind from every session first, so the baseline
	// is taken with every path warm.
	run.round(t, ctx, sessions, len(loadKinds))
	stopIfFailed()
	// serve's memory at rest is what is measured, and nothing serve reports
	// marks the warm-up's garbage collected and its connections closed.
	time.Sleep(time.Second)
	before := readProcStatus(t, pid)

	per := total / len(sessions)
	start := time.Now()
	run.round(t, ctx, sessions, per)
	took := time.Since(start)
	end := readProcStatus(t, pid)
	stopIfFailed()
	stopOperator()
	if err := <-operated; err != nil {
		t.Error(err)
	}

	after, settled := settleRSS(t, pid, before.rss+loadSettled)
	t.Logf("%s: %d requests (%d sessions × %d, %d of each kind) answered in %v, after a warm-up of %d",
		topo.name, per*len(sessions), len(sessions), per, per*len(sessions)/len(loadKinds), took.Round(time.Millisecond), len(loadKinds)*len(sessions))
	t.Logf("%s: serve RSS before %s, at the end %s, peak (VmHWM) %s, %v later %s (allowed %s); threads %d, %d, %d; open files %d, %d, %d (on the review store %d, %d, %d)",
		topo.name, mib(before.rss), mib(end.rss), mib(end.hwm), settled.Round(100*time.Millisecond), mib(after.rss), mib(before.rss+loadRSSMargin),
		before.threads, end.threads, after.threads, before.fds, end.fds, after.fds, before.dbFiles, end.dbFiles, after.dbFiles)
	if after.rss > before.rss+loadRSSMargin {
		t.Errorf("serve's RSS is %s %v after the load, above its baseline %s + %s", mib(after.rss), settled.Round(100*time.Millisecond), mib(before.rss), mib(loadRSSMargin))
	}
	if after.fds < 0 {
		t.Log("serve's open files are not counted: it is not dumpable, and this test is not root")
	} else if after.fds-after.dbFiles > before.fds-before.dbFiles+loadFDSlack || after.dbFiles > loadDBFiles() {
		t.Errorf("serve holds %d open files after the load (%d on the review store's database, at most %d allowed), %d before: %v, before %v",
			after.fds, after.dbFiles, loadDBFiles(), before.fds, after.files, before.files)
	}

	for _, s := range sessions {
		checkWire(t, ctx, s)
	}
	run.checkOutcomes(t)
	decisions := run.checkDecisionLog(t, filepath.Join(dir, "decisions.jsonl"))
	run.checkReviews(t, ctx, st, cfg, decisions)
	checkServeLog(t, filepath.Join(dir, "serve.log"))
}

// loadFDSlack is how many more files, besides the review store's database,
// serve may hold after the load than before: the HTTP hosts' connection
// pools may keep a few more idle connections than they had.
const loadFDSlack = 8

// loadDBFiles bounds serve's descriptors on the review store's database:
// one per connection, and the store keeps at most max(4, GOMAXPROCS)
// (engine/review maxConns). A store that opens a connection per waiter and
// closes it again keeps far more: SQLite defers closing a descriptor while
// another connection of the process holds a lock on the file.
func loadDBFiles() int { return max(4, goruntime.GOMAXPROCS(0)) }

// logContent turns on content in the decision log, so each decision can be
// matched to its request by the id in the prompt.
func logContent(t *testing.T, cfg string) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("decision_log:\n"), []byte("decision_log:\n  include_content: true\n"), 1)
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// childPID finds the serve this test started with cfg among its children.
func childPID(t *testing.T, cfg string) int {
	t.Helper()
	self := strconv.Itoa(os.Getpid())
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmdline, []byte("serve\x00--config\x00"+cfg+"\x00")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if _, rest, ok := bytes.Cut(stat, []byte(") ")); err == nil && ok {
			if f := strings.Fields(string(rest)); len(f) > 1 && f[1] == self {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				return pid
			}
		}
	}
	t.Fatal("serve's process is not among this test's children")
	return 0
}

// procStatus is what /proc says about a process's resources.
type procStatus struct {
	rss, hwm     int64 // resident now, and at most so far (bytes)
	threads, fds int
	dbFiles      int            // of fds, those on the review store's database
	files        map[string]int // open files by target (a path, or socket, pipe…)
}

func readProcStatus(t *testing.T, pid int) procStatus {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("serve's status: %v", err)
	}
	var ps procStatus
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), ":")
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch key {
		case "VmRSS":
			ps.rss = n << 10
		case "VmHWM":
			ps.hwm = n << 10
		case "Threads":
			ps.threads = int(n)
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if errors.Is(err, fs.ErrPermission) {
		// serve is not dumpable (sandbox.Undumpable): only a process with
		// CAP_SYS_PTRACE (root) may list its files.
		ps.fds = -1
		return ps
	}
	if err != nil {
		t.Fatalf("serve's files: %v", err)
	}
	ps.fds = len(fds)
	ps.files = map[string]int{}
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if kind, _, ok := strings.Cut(target, ":["); ok {
			target = kind // socket, pipe, anon_inode
		}
		ps.files[target]++
		if strings.HasSuffix(target, string(filepath.Separator)+review.FileName) {
			ps.dbFiles++
		}
	}
	return ps
}

// loadErrors reports a check's failures, the first few in full and then
// how many more, so a broken run does not print a line per request.
type loadErrors struct {
	t    *testing.T
	what string
	n    int
}

const loadErrorsShown = 10

func (e *loadErrors) errorf(format string, args ...any) {
	e.t.Helper()
	if e.n++; e.n <= loadErrorsShown {
		e.t.Errorf(format, args...)
	}
}

func (e *loadErrors) close() {
	e.t.Helper()
	if e.n > loadErrorsShown {
		e.t.Errorf("%s: %d more failures like these", e.what, e.n-loadErrorsShown)
	}
}

// settleRSS waits up to loadSettle for serve's RSS to come down to limit,
// and returns its status then and how long after the load that was.
func settleRSS(t *testing.T, pid int, limit int64) (procStatus, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		ps := readProcStatus(t, pid)
		if ps.rss <= limit || time.Since(start) >= loadSettle {
			return ps, time.Since(start)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// checkWire asks the session's upstream what it counted on its wire: every
// sampling request it sent answered exactly once, and no answer to anything
// it never asked.
func checkWire(t *testing.T, ctx context.Context, s *loadSession) {
	t.Helper()
	res, err := s.host.CallTool(ctx, s.server+"__load_wire", map[string]any{})
	if err != nil {
		t.Errorf("session %d: load_wire: %v", s.index, err)
		return
	}
	var got peer.WireCounts
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
		t.Errorf("session %d: load_wire: %v: %s", s.index, err, res.Text)
		return
	}
	want := peer.WireCounts{SamplingSent: s.next, AnsweredOnce: s.next}
	if got != want {
		t.Errorf("session %d (%s) on the wire: %+v, want %+v", s.index, s.server, got, want)
	}
}

// checkOutcomes: every request got exactly one answer, the one its kind
// calls for, and the host was asked exactly for those that passed.
func (r *loadRun) checkOutcomes(t *testing.T) {
	t.Helper()
	errs := &loadErrors{t: t, what: "outcomes"}
	defer errs.close()
	for _, s := range r.strays {
		errs.errorf("%s", s)
	}
	seen := map[string]string{} // decision id -> request id
	for _, id := range slices.Sorted(maps.Keys(r.requests)) {
		q := r.requests[id]
		if len(q.got) != 1 {
			errs.errorf("%s (%s): %d outcomes at the upstream, want 1", id, q.kind.name, len(q.got))
			continue
		}
		if err := loadOutcomeErr(q, q.got[0]); err != nil {
			errs.errorf("%s (%s): %v", id, q.kind.name, err)
		}
		if e := q.got[0].Error; e != nil {
			var data struct {
				DecisionID string `json:"decision_id"`
			}
			_ = json.Unmarshal(e.Data, &data)
			if other, dup := seen[data.DecisionID]; dup {
				errs.errorf("%s and %s were answered with the same decision %s", other, id, data.DecisionID)
			}
			seen[data.DecisionID] = id
		}
		want := 0
		if q.kind.answered {
			want = 1
		}
		if got := r.asked[id]; got != want {
			errs.errorf("%s (%s): the host was asked %d times, want %d", id, q.kind.name, got, want)
		}
	}
	for id, n := range r.asked {
		if r.requests[id] == nil {
			errs.errorf("the host was asked %d times for %q, which no upstream sent", n, id)
		}
	}
}

// loadOutcomeErr says what is wrong with what the upstream received for q.
func loadOutcomeErr(q *loadRequest, got peer.SampleOutcome) error {
	if q.kind.code == 0 {
		if got.Error != nil {
			return fmt.Errorf("upstream got error %d %q, want the completion", got.Error.Code, got.Error.Message)
		}
		if want := "the host's answer to " + q.id + `"`; !strings.Contains(string(got.Completion), want) {
			return fmt.Errorf("upstream got %s, want the host's answer to %s", got.Completion, q.id)
		}
		return nil
	}
	if got.Error == nil {
		return fmt.Errorf("upstream got completion %s, want error %d", got.Completion, q.kind.code)
	}
	if got.Error.Code != q.kind.code || !strings.Contains(got.Error.Message, q.kind.msg) {
		return fmt.Errorf("upstream got error %d %q, want %d containing %q", got.Error.Code, got.Error.Message, q.kind.code, q.kind.msg)
	}
	var data map[string]any
	if err := json.Unmarshal(got.Error.Data, &data); err != nil {
		return fmt.Errorf("error data %s: %v", got.Error.Data, err)
	}
	if id, _ := data["decision_id"].(string); !strings.HasPrefix(id, "dc-") || len(data) != 2 {
		return fmt.Errorf("error data = %s, want exactly decision_id and reason_codes", got.Error.Data)
	}
	return nil
}

// loadDecision is one decision-log line, as far as this test reads it.
type loadDecision struct {
	DecisionID string `json:"decision_id"`
	Input      struct {
		Stage    string `json:"stage"`
		Approval *struct {
			DecisionID string `json:"decision_id"`
		} `json:"approval"`
	} `json:"input"`
	Result struct {
		Outcome  string `json:"outcome"`
		ReviewID string `json:"review_id"`
	} `json:"result"`
	raw string
}

// loadDecisions is a request's decisions by kind: its first request-stage
// decision, the re-decision after an approval, the result-stage decision.
type loadDecisions struct {
	first, reconsidered, result []loadDecision
}

// checkDecisionLog: every request has exactly one first decision with the
// outcome its kind calls for, whose id is the one the upstream was given;
// an approved one exactly one re-decision naming it; an answered one
// exactly one result-stage decision. Nothing else is in the log. It
// returns each request's first decision.
func (r *loadRun) checkDecisionLog(t *testing.T, path string) map[string]loadDecision {
	t.Helper()
	errs := &loadErrors{t: t, what: "decision log"}
	defer errs.close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	byReq := map[string]*loadDecisions{}
	lines := 0
	for line := range bytes.Lines(b) {
		lines++
		var d loadDecision
		var raw struct {
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(line, &d); err != nil || json.Unmarshal(line, &raw) != nil {
			errs.errorf("decision log line %d: %v: %.200s", lines, err, line)
			continue
		}
		d.raw = string(line)
		id := string(loadIDPattern.Find(raw.Input))
		if r.requests[id] == nil {
			errs.errorf("decision %s (%s, %s) is for no request of this run: %.300s", d.DecisionID, d.Input.Stage, d.Result.Outcome, line)
			continue
		}
		ds := byReq[id]
		if ds == nil {
			ds = &loadDecisions{}
			byReq[id] = ds
		}
		switch {
		case d.Input.Stage == "result":
			ds.result = append(ds.result, d)
		case d.Input.Approval != nil:
			ds.reconsidered = append(ds.reconsidered, d)
		default:
			ds.first = append(ds.first, d)
		}
	}
	first := map[string]loadDecision{}
	want := 0
	for _, id := range slices.Sorted(maps.Keys(r.requests)) {
		q, ds := r.requests[id], byReq[id]
		if ds == nil {
			ds = &loadDecisions{}
		}
		wantRe, wantRes := 0, 0
		if q.kind.approved {
			wantRe = 1
		}
		if q.kind.answered {
			wantRes = 1
		}
		want += 1 + wantRe + wantRes
		if len(ds.first) != 1 || len(ds.reconsidered) != wantRe || len(ds.result) != wantRes {
			errs.errorf("%s (%s): %d first, %d re-decided, %d result-stage decisions; want 1, %d, %d",
				id, q.kind.name, len(ds.first), len(ds.reconsidered), len(ds.result), wantRe, wantRes)
			continue
		}
		d := ds.first[0]
		first[id] = d
		if d.Result.Outcome != q.kind.first {
			errs.errorf("%s (%s): first decision %s is %s, want %s: %.400s", id, q.kind.name, d.DecisionID, d.Result.Outcome, q.kind.first, d.raw)
		}
		if e := q.got; len(e) == 1 && e[0].Error != nil && !strings.Contains(string(e[0].Error.Data), `"`+d.DecisionID+`"`) {
			errs.errorf("%s (%s): the upstream was told decision %s, the log has %s", id, q.kind.name, e[0].Error.Data, d.DecisionID)
		}
		if wantRe == 1 {
			if re := ds.reconsidered[0]; re.Result.Outcome != "pass" || re.Input.Approval.DecisionID != d.DecisionID {
				errs.errorf("%s (%s): re-decision %s is %s for approval of %s, want pass for %s",
					id, q.kind.name, re.DecisionID, re.Result.Outcome, re.Input.Approval.DecisionID, d.DecisionID)
			}
		}
		if wantRes == 1 && ds.result[0].Result.Outcome != "pass" {
			errs.errorf("%s (%s): result-stage decision is %s, want pass", id, q.kind.name, ds.result[0].Result.Outcome)
		}
	}
	if lines != want {
		t.Errorf("decision log holds %d decisions, want %d", lines, want)
	}
	t.Logf("decision log: %d decisions for %d requests", lines, len(r.requests))
	return first
}

// checkReviews: each escalation has exactly one review item, opened for
// its first decision and closed as its kind says, with exactly its audit
// events; nothing else is in the queue or the audit log; the chain
// verifies, through the store and through `mcpx-fw audit --verify`.
func (r *loadRun) checkReviews(t *testing.T, ctx context.Context, st *review.Store, cfg string, first map[string]loadDecision) {
	t.Helper()
	errs := &loadErrors{t: t, what: "review queue"}
	defer errs.close()
	items, err := st.List(ctx, review.Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.Audit(ctx, review.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	events := map[string][]review.Event{}
	for _, e := range entries {
		events[e.ItemID] = append(events[e.ItemID], e.Event)
	}
	byReq := map[string][]review.Item{}
	for _, it := range items {
		id := string(loadIDPattern.Find(it.Request))
		if r.requests[id] == nil {
			errs.errorf("review %s is for no request of this run: %s", it.ID, it.Request)
			continue
		}
		byReq[id] = append(byReq[id], it)
	}
	wantEntries := 0
	for _, id := range slices.Sorted(maps.Keys(r.requests)) {
		q, its := r.requests[id], byReq[id]
		if q.kind.review == "" {
			if len(its) != 0 {
				errs.errorf("%s (%s): %d review items, want none", id, q.kind.name, len(its))
			}
			continue
		}
		wantEntries += len(q.kind.audit)
		if len(its) != 1 {
			errs.errorf("%s (%s): %d review items, want 1", id, q.kind.name, len(its))
			continue
		}
		it := its[0]
		if it.State != q.kind.review || it.Stage != review.StageRequest || it.DecisionID != first[id].DecisionID {
			errs.errorf("%s (%s): review %s is %s at stage %s for decision %s; want %s at stage request for %s",
				id, q.kind.name, it.ID, it.State, it.Stage, it.DecisionID, q.kind.review, first[id].DecisionID)
		}
		if !slices.Equal(events[it.ID], q.kind.audit) {
			errs.errorf("%s (%s): review %s has audit events %v, want %v", id, q.kind.name, it.ID, events[it.ID], q.kind.audit)
		}
	}
	head, n, err := st.VerifyAudit(ctx)
	if err != nil {
		t.Errorf("audit chain: %v", err)
	}
	if n != wantEntries || len(entries) != wantEntries {
		t.Errorf("audit log holds %d entries (%d verified), want %d", len(entries), n, wantEntries)
	}
	if res := runCLI(t, "audit", "--verify", "--config", cfg); res.code != 0 {
		t.Errorf("mcpx-fw audit --verify: exit %d: %s", res.code, res.stderr)
	}
	t.Logf("review queue: %d items; audit log: %d entries, chain verified to #%d", len(items), n, head.Seq)
}

// checkServeLog fails on any error serve logged: under load nothing may go
// wrong quietly (a decision not recorded, a review that did not settle).
func checkServeLog(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for line := range bytes.Lines(b) {
		var l struct{ Level string }
		if json.Unmarshal(line, &l) == nil && (l.Level == "error" || l.Level == "fatal" || l.Level == "panic") {
			bad = append(bad, string(bytes.TrimSpace(line)))
		}
	}
	if len(bad) > 0 {
		t.Errorf("serve logged %d errors; the first: %s", len(bad), strings.Join(bad[:min(len(bad), 3)], "\n"))
	}
}
