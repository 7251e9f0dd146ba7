//go:build linux

package main

// Fault injection: each test breaks one thing under a running `mcpx-fw
// serve` (real processes: serve, its two built-in upstreams, the review
// CLI) and checks the same four things:
//
//   - the wire: the upstream (or the host) gets a clear JSON-RPC error,
//     -32603 for everything nobody decided, with only decision_id and
//     reason_codes in data;
//   - the log: serve's service log (its stderr, captured here) names the
//     fault;
//   - nothing is permitted by accident: the host's model is not asked,
//     no upstream gets a completion it should not, and what waited is
//     closed (abandoned, expired) and refused to a later `review approve`;
//   - the store: the audit chain verifies, SQLite's integrity check
//     passes, and what was stored before the fault is still there;
//
// and that serve keeps serving: an echo tools/call and a permitted sample
// through the other upstream (spare) during or after the fault.
//
// The faults, and how each is made without root:
//
//   - upstream dies: SIGKILL to the upstream process (found under serve's
//     pid by the fault_tag in its environment) while its sampling request
//     waits for review, or for the host's model;
//   - host disconnects: over HTTP, one of two hosts cancels its call, or
//     crashes (a host of plain HTTP requests whose connection is dropped),
//     while its review waits; over stdio, the only host quits
//     (TestHostLeavingAbandonsPendingReviews has the timing; this adds the
//     upstream's side, the store and a restart);
//   - state dir read-only: chmod a-w of the dir and the queue's files
//     (skipped as root, whom file modes do not bind);
//   - SQLite locked: this test process, which is not serve, holds the
//     queue's write lock (BEGIN IMMEDIATE) for longer than the 5s busy
//     timeout;
//   - policy dir deleted: rm -rf of a copy of the policies serve watches;
//   - clock jumps: a process cannot step the system clock without
//     privilege, and Go reads the clock through the vDSO, so no faketime
//     library moves it either. What a step does to the queue is change
//     now - expires_at, and the test changes that from the other side: it
//     moves expires_at of the waiting review in the store, as another
//     process with a stepped clock would see it. The clock itself is
//     stepped, in-process, in engine/review (TestWallClockSteps);
//   - disk full: RLIMIT_FSIZE set on the running serve with prlimit(2)
//     (allowed on one's own processes): every write to a regular file past
//     the limit fails with EFBIG, as on a full disk; serve's log goes to a
//     pipe, which the limit does not cover, so the test can read it. A
//     tmpfs or a loop device would need root.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// faultLog is serve's stderr as it arrives: its service log, one JSON
// object a line, and the upstreams' own stderr.
type faultLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *faultLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *faultLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// wait waits until a line of the log contains every one of parts, and
// returns it.
func (l *faultLog) wait(t *testing.T, parts ...string) string {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for line := range strings.SplitSeq(l.String(), "\n") {
			if containsAll(line, parts) {
				t.Logf("serve logged: %s", line)
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve logged no line with %q; its log:\n%s", parts, l.String())
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// faultRig is one serve's config and files, in a fresh folder: two test
// upstreams, peer (which the faults hit) and spare (the other traffic), a
// copy of the shipped policies, the state dir, the decision log, and the
// log of what the upstreams' sampling requests got back (MCPXFW_PEER_LOG).
type faultRig struct {
	dir, cfg, state, policies, decisions, peerLog string
	log                                           *faultLog
	queue                                         *review.Store // opened by the test, as another process
}

func newFaultRig(t *testing.T, reviewTimeout time.Duration) *faultRig {
	t.Helper()
	dir := t.TempDir()
	r := &faultRig{dir: dir, cfg: filepath.Join(dir, "mcpx-fw.yaml"), state: filepath.Join(dir, "state"),
		policies: filepath.Join(dir, "policies"), decisions: filepath.Join(dir, "decisions.jsonl"),
		peerLog: filepath.Join(dir, "peer.log"), log: &faultLog{}}
	if out, err := exec.Command("cp", "-R", repoPath(t, "policies"), r.policies).CombinedOutput(); err != nil {
		t.Fatalf("copy the policies: %v: %s", err, out)
	}
	// fault_tag marks each upstream's process, so the test can find it
	// among serve's descendants; MCPXFW_PEER_LOG is where it records what
	// its sampling requests got.
	server := func(name string) string {
		return fmt.Sprintf("  %s:\n    command: [%q]\n    label: Test peer %s\n    max_tokens: 1000\n    env: {fault_tag: %s, MCPXFW_PEER_LOG: %q}\n",
			name, upstreamBinary, name, name, r.peerLog)
	}
	writeFile(t, dir, "mcpx-fw.yaml", fmt.Sprintf(`state_dir: %s
policy:
  dir: %s
review:
  timeout: %s
sampling:
  host_timeout: 30s
servers:
%s%sdecision_log:
  sink: %s
log:
  file: ""
`, r.state, r.policies, reviewTimeout, server("peer"), server("spare"), r.decisions))
	return r
}

// env is serve's environment.
func (r *faultRig) env() []string {
	return os.Environ()
}

// serve starts `mcpx-fw serve` over stdio under a test host whose model
// answers with answer.
func (r *faultRig) serve(t *testing.T, answer peer.Answer) *peer.Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", r.cfg},
		Env: r.env(), Stderr: r.log, Answer: answer, Tools: true})
	if err != nil {
		t.Fatalf("start serve: %v\n%s", err, r.log)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// serveHTTP starts `mcpx-fw serve --http` on a free loopback port and
// returns its URL.
func (r *faultRig) serveHTTP(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--config", r.cfg, "--http", "127.0.0.1:0")
	cmd.Env, cmd.Stderr, cmd.WaitDelay = r.env(), r.log, 5*time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line := r.log.wait(t, "mcpx-fw: listening on ")
	return strings.TrimSpace(strings.TrimPrefix(line, "mcpx-fw: listening on "))
}

// faultSample has server's `sample` tool push params and returns what the
// upstream got back. A tools/call that fails comes back as the outcome's
// error, with the host's view of it.
func faultSample(ctx context.Context, h *peer.Host, server, params string) *peer.SampleOutcome {
	res, err := h.CallTool(ctx, server+"__sample", map[string]any{"params": json.RawMessage(params)})
	var pe *peer.Error
	switch {
	case errors.As(err, &pe):
		return &peer.SampleOutcome{Error: pe}
	case err != nil:
		return &peer.SampleOutcome{Error: &peer.Error{Message: err.Error()}}
	}
	var out peer.SampleOutcome
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		return &peer.SampleOutcome{Error: &peer.Error{Message: fmt.Sprintf("sample result %q: %v", res.Text, err)}}
	}
	return &out
}

// sampleAsync runs faultSample in the background.
func sampleAsync(ctx context.Context, h *peer.Host, server, params string) <-chan *peer.SampleOutcome {
	ch := make(chan *peer.SampleOutcome, 1)
	go func() { ch <- faultSample(ctx, h, server, params) }()
	return ch
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(45 * time.Second):
		t.Fatalf("no %s within 45s", what)
	}
	var zero T
	return zero
}

// checkServing is "serve keeps serving other traffic": an echo tools/call
// and a permitted sample through each server, answered by the host's model.
func checkServing(t *testing.T, h *peer.Host, servers ...string) {
	t.Helper()
	for _, s := range servers {
		res, err := h.CallTool(t.Context(), s+"__echo", map[string]any{"text": "still here"})
		if err != nil || res.Text != "still here" {
			t.Errorf("%s__echo: %+v, %v; want it answered", s, res, err)
		}
		checkOutcome(t, faultSample(t.Context(), h, s, plainRequest), 0, "")
	}
}

// checkStore is "nothing lost from the store": the audit chain verifies
// and SQLite finds the file intact.
func (r *faultRig) checkStore(t *testing.T) {
	t.Helper()
	if res := runCLI(t, "audit", "--verify", "--config", r.cfg); res.code != 0 {
		t.Errorf("audit --verify: exit %d: %s", res.code, res.stderr)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(r.state, review.FileName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %q, %v", ok, err)
	}
}

// store is the review queue as another process (the CLI) opens it: no
// policy needed.
func (r *faultRig) store(t *testing.T) *review.Store {
	t.Helper()
	if r.queue == nil {
		r.queue = openStore(t, r.cfg)
	}
	return r.queue
}

// item reads a review the way another process would.
func (r *faultRig) item(t *testing.T, id string) review.Item {
	t.Helper()
	it, err := r.store(t).Get(t.Context(), id)
	if err != nil {
		t.Fatalf("review %s: %v", id, err)
	}
	return it
}

// policyRevision is the revision `mcpx-fw check` compiles from the policy
// dir as it is now: the one serve's watcher logs once it has reloaded it.
func (r *faultRig) policyRevision(t *testing.T) string {
	t.Helper()
	res := runCLI(t, "check", "--config", r.cfg)
	_, rest, ok := strings.Cut(res.stdout, "policy revision ")
	rev, _, _ := strings.Cut(rest, ",")
	if res.code != 0 || !ok || rev == "" {
		t.Fatalf("check: exit %d, %q, %q; want its policy revision", res.code, res.stdout, res.stderr)
	}
	return rev
}

// pending waits for a pending review and returns its id. It reads the
// store directly, so it works when the review CLI cannot start.
func (r *faultRig) pending(t *testing.T) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		items, err := r.store(t).List(t.Context(), review.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) > 0 {
			return items[0].ID
		}
	}
	t.Fatalf("no review became pending; serve's log:\n%s", r.log)
	return ""
}

// settled waits until review id is no longer pending and returns it.
func (r *faultRig) settled(t *testing.T, id string) review.Item {
	t.Helper()
	it, ok := r.settledWithin(t, id, 15*time.Second)
	if !ok {
		t.Fatalf("review %s still pending after 15s", id)
	}
	return it
}

// settledWithin waits up to d for review id to leave pending, and returns
// it and whether it did.
func (r *faultRig) settledWithin(t *testing.T, id string, d time.Duration) (review.Item, bool) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		it := r.item(t, id)
		if it.State != review.StatePending || time.Now().After(deadline) {
			return it, it.State != review.StatePending
		}
	}
}

// refuseApproval checks that nobody can approve review id any more.
func (r *faultRig) refuseApproval(t *testing.T, id, why string) {
	t.Helper()
	res := runCLI(t, "review", "approve", id, "--config", r.cfg)
	if res.code != 1 || !strings.Contains(res.stderr, why) {
		t.Errorf("review approve %s: exit %d, %q; want refused naming %q", id, res.code, res.stderr, why)
	}
}

// decisionLogged reports whether the decision log holds decision id.
func (r *faultRig) decisionLogged(t *testing.T, id string) bool {
	t.Helper()
	b, err := os.ReadFile(r.decisions)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(`"`+id+`"`))
}

func faultDecisionID(t *testing.T, got *peer.SampleOutcome) string {
	t.Helper()
	var data struct {
		DecisionID string `json:"decision_id"`
	}
	if got.Error == nil || json.Unmarshal(got.Error.Data, &data) != nil || data.DecisionID == "" {
		t.Fatalf("want an error carrying a decision id, got %+v", got)
	}
	return data.DecisionID
}

// noneAsked checks that the host's model was asked no more than before
// times (h.Asked counts every question).
func noneAsked(t *testing.T, h *peer.Host, before int) {
	t.Helper()
	if n := len(h.Asked); n != before {
		t.Errorf("the host's model was asked %d times during the fault; nothing may reach it", n-before)
	}
}

// faultUpstreamPID finds serve's upstream tagged name: serve's child, or,
// when it runs isolated, the child of serve's child (the launcher).
func faultUpstreamPID(t *testing.T, servePID int, name string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	parents := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])) // fields[1] is the ppid
		if len(fields) >= 2 {
			parents[pid], _ = strconv.Atoi(fields[1])
		}
	}
	for pid, ppid := range parents {
		if ppid != servePID && parents[ppid] != servePID {
			continue
		}
		if env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); bytes.Contains(env, []byte("\x00fault_tag="+name+"\x00")) ||
			bytes.HasPrefix(env, []byte("fault_tag="+name+"\x00")) {
			return pid
		}
	}
	t.Fatalf("no upstream %s among the descendants of serve (pid %d)", name, servePID)
	return 0
}

// TestFaultUpstreamDies: the upstream is killed while its sampling request
// waits for review, or for the host's model. Its tools/call fails with
// -32603 naming it, serve logs the lost connection, the review is
// abandoned (never approvable), the host's completion goes nowhere, the
// other upstream keeps working, and serve starts the dead one again.
func TestFaultUpstreamDies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		params string
		review bool // the request waits for review; else for the host's model
	}{
		{name: "while its request waits for review", params: secretRequest, review: true},
		{name: "while the host's model answers", params: plainRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newFaultRig(t, time.Minute)
			var slow atomic.Bool // the model takes its time: until the firewall gives up
			asked, stop, withdrawn := make(chan struct{}, 8), make(chan struct{}), make(chan struct{}, 1)
			defer close(stop)
			h := r.serve(t, func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
				asked <- struct{}{}
				if slow.Load() {
					select {
					case <-stop:
					case <-ctx.Done(): // serve withdrew the question
						withdrawn <- struct{}{}
					}
				}
				return json.RawMessage(hostAnswer), nil
			})
			checkServing(t, h, "peer") // peer answers before the fault
			<-asked
			before := len(h.Asked)
			slow.Store(!tc.review)

			call := sampleAsync(t.Context(), h, "peer", tc.params)
			var id string
			if tc.review {
				id = r.pending(t)
			} else {
				receive(t, asked, "question to the host's model")
			}
			pid := faultUpstreamPID(t, h.PID(), "peer")
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}

			got := receive(t, call, "answer to the host's tools/call")
			if got.Error == nil || got.Error.Code != -32603 || !strings.Contains(got.Error.Message, "upstream peer is gone: its connection was lost during the call") {
				t.Errorf("the host's call to the dead upstream got %+v; want -32603 naming upstream peer gone", got.Error)
			}
			r.log.wait(t, `"upstream connection lost`, `"server":"peer"`)
			if !tc.review {
				receive(t, withdrawn, "withdrawal of the question to the host's model")
			} else {
				if it := r.settled(t, id); it.State != review.StateAbandoned || it.Note != review.NoteCancelled {
					t.Errorf("review after the upstream died: %s (%q); want abandoned", it.State, it.Note)
				}
				r.log.wait(t, `"review closed"`, id, `"state":"abandoned"`)
				r.refuseApproval(t, id, "abandoned")
				noneAsked(t, h, before)
			}
			slow.Store(false)
			if b, _ := os.ReadFile(r.peerLog); bytes.Count(b, []byte("\n")) != 1 {
				t.Errorf("the upstream recorded %q; want only the warm-up's completion (it died before any other answer)", b)
			}
			// Later calls to it fail at once, saying it is down, until serve
			// has started it again (restart.backoff, 1s); then it serves,
			// and the restart is logged once.
			if _, err := h.CallTool(t.Context(), "peer__echo", map[string]any{"text": "x"}); err != nil &&
				!strings.Contains(err.Error(), "upstream peer is down since") {
				t.Errorf("peer__echo after its death: %v; want -32603 upstream peer is down since …, or its answer once restarted", err)
			}
			checkServing(t, h, "spare")
			r.log.wait(t, `"upstream restarted"`, `"server":"peer"`)
			checkServing(t, h, "peer")
			if n := strings.Count(r.log.String(), `"upstream restarted"`); n != 1 {
				t.Errorf("serve logged %d restarts, want 1:\n%s", n, r.log.String())
			}
			r.checkStore(t)
		})
	}
}

// TestFaultHostDisconnects: a host leaves while its upstream's sampling
// request waits for review. The review is abandoned at once (never
// approvable, never delivered), the upstream never gets a completion, and
// serve keeps serving: over HTTP the other host's traffic; over stdio,
// where serve ends with its only host (see also
// TestHostLeavingAbandonsPendingReviews), a new serve on the same state
// dir.
//
// An HTTP host that crashes (its connection drops, no cancellation, no
// DELETE) is not noticed today: its session lives on, so the review stays
// pending until its timeout. Even approved, nothing reaches a model or the
// upstream: the host cannot be asked, and the upstream gets -32603.
func TestFaultHostDisconnects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		http bool
		// begin has the leaving host start a sampling call that waits for
		// review, and returns what makes the host leave.
		begin func(t *testing.T, r *faultRig, url string) (leave func())
		// unnoticed: serve does not see the host go (the crash case above).
		unnoticed bool
	}{
		{name: "http host cancels its call", http: true, begin: func(t *testing.T, r *faultRig, url string) func() {
			h := faultHTTPHost(t, url)
			ctx, cancel := context.WithCancel(t.Context())
			sampleAsync(ctx, h, "peer", secretRequest)
			return cancel
		}},
		{name: "http host crashes", http: true, unnoticed: true, begin: func(t *testing.T, r *faultRig, url string) func() {
			return faultCrashingHost(t, url)
		}},
		{name: "stdio host quits", begin: func(t *testing.T, r *faultRig, _ string) func() {
			h := r.serve(t, answerWith(hostAnswer))
			sampleAsync(t.Context(), h, "peer", secretRequest)
			return func() { _ = h.Disconnect() }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newFaultRig(t, time.Minute)
			var url string
			var other *peer.Host
			if tc.http {
				url = r.serveHTTP(t)
				other = faultHTTPHost(t, url)
			}
			leave := tc.begin(t, r, url)
			id := r.pending(t)
			left := time.Now()
			leave()

			if tc.unnoticed {
				// A second for serve to settle the review, as it does at
				// once for a host that cancels or quits. The gap is held
				// to what it is: once serve notices the crash, this fails,
				// and the case drops unnoticed and takes the checks below.
				if _, noticed := r.settledWithin(t, id, time.Second); noticed {
					t.Fatalf("serve noticed the crashed HTTP host: the gap is closed; drop unnoticed from this case and the gap from the doc")
				}
				// Approved, nothing reaches a model or the upstream.
				if res := runCLI(t, "review", "approve", id, "--config", r.cfg); res.code != 0 {
					t.Fatalf("approve: exit %d: %s", res.code, res.stderr)
				}
				r.log.wait(t, "host sampling failed")
				faultPeerGot(t, r, `"code":-32603`)
				checkServing(t, other, "peer", "spare")
				r.checkStore(t)
				return
			}
			// Abandoned by serve itself, not found orphaned by a later reader.
			it := r.settled(t, id)
			if it.State != review.StateAbandoned || it.Note != review.NoteCancelled {
				t.Fatalf("review after the host left: %s (%q); want abandoned by serve (%q)", it.State, it.Note, review.NoteCancelled)
			}
			if took := time.Since(left); took > 5*time.Second {
				t.Errorf("the review was abandoned %v after the host left; want at once", took)
			}
			r.log.wait(t, `"review closed"`, id, `"state":"abandoned"`)
			// The upstream's own request never gets a completion: -32603, or
			// its own cancellation when its tools/call was cancelled first.
			faultPeerGot(t, r, "")
			r.refuseApproval(t, id, "abandoned")
			if tc.http {
				checkServing(t, other, "peer", "spare")
			} else {
				again := r.serve(t, answerWith(hostAnswer))
				checkServing(t, again, "peer", "spare")
				if it := r.item(t, id); it.State != review.StateAbandoned {
					t.Errorf("after a restart the review is %s; want abandoned", it.State)
				}
			}
			r.checkStore(t)
		})
	}
}

// faultPeerGot checks what the upstreams' sampling requests got back, as
// they recorded it: never a completion, and want if not empty.
func faultPeerGot(t *testing.T, r *faultRig, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(r.peerLog)
		if bytes.Contains(b, []byte(`"completion"`)) {
			t.Fatalf("an upstream got a completion: %s", b)
		}
		if bytes.Contains(b, []byte(want)) || time.Now().After(deadline) {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("the upstream's sampling request got %q; want %s", b, want)
			}
			t.Logf("the upstream's sampling request got: %s", bytes.TrimSpace(b))
			return
		}
	}
}

// faultHTTPHost connects a test host to serve's HTTP endpoint.
func faultHTTPHost(t *testing.T, url string) *peer.Host {
	t.Helper()
	hh, err := peer.ConnectHTTP(t.Context(), url, peer.HostOptions{Answer: answerWith(hostAnswer), Tools: true})
	if err != nil {
		t.Fatal(err)
	}
	// The SDK's Close waits for calls in flight; cancelled ones end at once.
	t.Cleanup(func() { _ = hh.Close() })
	return hh.Host
}

// faultCrashingHost is an HTTP host made of plain requests, so that it can
// vanish the way a crashed one does: it initializes a 2025-11-25 session
// (declaring sampling), starts peer's sample of the secret request, and
// returns what drops that call's connection without a word.
func faultCrashingHost(t *testing.T, url string) (crash func()) {
	t.Helper()
	post := func(ctx context.Context, sid, body string) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("POST %s: %v", body, err)
			}
			return nil
		}
		return resp
	}
	resp := post(t.Context(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{"sampling":{"tools":{}}},"clientInfo":{"name":"crashing-host","version":"1"}}}`)
	if resp == nil {
		t.FailNow()
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if sid == "" {
		t.Fatalf("initialize: no session id (%s)", resp.Status)
	}
	if resp := post(t.Context(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp != nil {
		resp.Body.Close()
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		if resp := post(ctx, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"peer__sample",`+
			`"arguments":{"params":`+secretRequest+`}}}`); resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body) // until the connection drops
			resp.Body.Close()
		}
	}()
	return cancel
}

// TestFaultStateDirReadOnly: the state dir and the queue's files become
// read-only while serve runs. serve still holds them open, and writes
// through them (POSIX checks permissions at open), so decisions are still
// recorded; but no operator could open the queue to decide, so an
// escalation fails at once with -32603 "review queue unavailable" rather
// than sitting out its timeout, and the log says the store is not
// writable. Once the modes are restored, reviews work again.
func TestFaultStateDirReadOnly(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("file modes do not bind root: run as an ordinary user (CI does)")
	}
	r := newFaultRig(t, time.Minute)
	h := r.serve(t, answerWith(hostAnswer))
	checkServing(t, h, "peer") // the queue's files exist now
	before := len(h.Asked)
	files, _ := filepath.Glob(filepath.Join(r.state, "*"))
	chmod := func(file, dir os.FileMode) {
		for _, f := range files {
			if err := os.Chmod(f, file); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(r.state, dir); err != nil {
			t.Fatal(err)
		}
	}
	chmod(0o400, 0o500)
	t.Cleanup(func() { chmod(0o600, 0o700) })

	start := time.Now()
	got := faultSample(t.Context(), h, "peer", secretRequest)
	checkOutcome(t, got, -32603, "review queue unavailable")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the escalation failed after %v; want at once, not at its timeout", took)
	}
	dc := faultDecisionID(t, got)
	r.log.wait(t, `"msg":"decision"`, dc, `"outcome":"error"`, "is not writable")
	noneAsked(t, h, before)
	if res := runCLI(t, "review", "list", "--config", r.cfg); res.code != 1 || !strings.Contains(res.stderr, "permission denied") {
		t.Errorf("review list on a read-only state dir: exit %d, %q; want a clear refusal", res.code, res.stderr)
	}
	if res := runCLI(t, "check", "--config", r.cfg); res.code != 1 || !strings.Contains(res.stderr, "state_dir") {
		t.Errorf("check (serve's start-up) on a read-only state dir: exit %d, %q; want a refusal naming state_dir", res.code, res.stderr)
	}
	checkServing(t, h, "peer", "spare") // permitted traffic is still decided and recorded
	chmod(0o600, 0o700)

	if d, err := r.store(t).Decision(t.Context(), dc); err != nil || d.Outcome != "error" {
		t.Errorf("the refused escalation's decision: %+v, %v; want recorded as an error", d, err)
	}
	call := sampleAsync(t.Context(), h, "peer", secretRequest)
	approveNext(t, r.cfg)
	checkOutcome(t, receive(t, call, "approved sample"), 0, "")
	r.checkStore(t)
}

// TestFaultStoreLocked: another process (this test, which is not serve)
// holds the queue's write lock, as a stuck `sqlite3 reviews.db` session
// with an open BEGIN IMMEDIATE would, for longer than the 5s busy timeout.
// An escalation cannot be queued, so it fails closed with -32603 "review
// queue unavailable" and the log names the lock. Tools keep working during
// the lock, and reviews work once it is released.
//
// A lock that shuts readers out too (locking_mode EXCLUSIVE) cannot be
// taken while serve runs: in WAL mode each of serve's connections holds a
// shared lock on the file, so the other process gets SQLITE_BUSY.
func TestFaultStoreLocked(t *testing.T) {
	t.Parallel()
	r := newFaultRig(t, time.Minute)
	h := r.serve(t, answerWith(hostAnswer))
	checkServing(t, h, "peer")
	before := auditEvents(t, r.cfg, "")

	db, err := sql.Open("sqlite", "file:"+filepath.Join(r.state, review.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "BEGIN IMMEDIATE")
	locked := time.Now()

	secret := sampleAsync(t.Context(), h, "peer", secretRequest)
	plain := sampleAsync(t.Context(), h, "peer", plainRequest)
	// Tools pass through during the lock: they do not touch the store.
	if res, err := h.CallTool(t.Context(), "spare__echo", map[string]any{"text": "during"}); err != nil || res.Text != "during" {
		t.Errorf("spare__echo during the lock: %+v, %v", res, err)
	}
	gotSecret := receive(t, secret, "escalation under the lock")
	gotPlain := receive(t, plain, "permitted request under the lock")
	held := time.Since(locked)
	mustExec(t, conn, "ROLLBACK")
	t.Logf("lock held %v (busy timeout 5s)", held.Round(time.Millisecond))
	if held < 5*time.Second {
		t.Errorf("the lock was held only %v; the fault is a lock held past the 5s busy timeout", held)
	}

	checkOutcome(t, gotSecret, -32603, "review queue unavailable")
	dc := faultDecisionID(t, gotSecret)
	r.log.wait(t, `"msg":"decision"`, dc, `"outcome":"error"`, "is locked", "database is locked")
	if !r.decisionLogged(t, dc) {
		t.Errorf("decision %s is not in the decision log", dc)
	}
	checkUnrecordedPass(t, gotPlain)
	if items, err := r.store(t).List(t.Context(), review.Filter{All: true}); err != nil || len(items) != 0 {
		t.Errorf("after the lock: %d reviews, %v; want none queued", len(items), err)
	}

	checkServing(t, h, "peer", "spare")
	call := sampleAsync(t.Context(), h, "peer", secretRequest)
	approveNext(t, r.cfg)
	checkOutcome(t, receive(t, call, "approved sample"), 0, "")
	after := auditEvents(t, r.cfg, "")
	if after["opened"] != before["opened"]+1 || after["approved"] != before["approved"]+1 {
		t.Errorf("audit %v -> %v; want exactly the one review opened and approved after the lock", before, after)
	}
	r.checkStore(t)
}

func mustExec(t *testing.T, conn *sql.Conn, q string) {
	t.Helper()
	if _, err := conn.ExecContext(t.Context(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// checkUnrecordedPass: a request the policy permits while the store
// cannot record its decision is refused with -32603: a pass nobody can
// find later, whose usage no budget counts, is not a pass (the engine
// fails it closed, engine/record.go).
func checkUnrecordedPass(t *testing.T, got *peer.SampleOutcome) {
	t.Helper()
	checkOutcome(t, got, -32603, "review queue unavailable")
}

// TestFaultPolicyDirDeleted: the policy folder serve watches is deleted.
// The reload fails, the log says the previous policy keeps deciding, and
// it does: permitted requests pass, denied ones are denied, escalations
// wait. An operator cannot approve meanwhile (approving re-decides, and
// the CLI loads the policy), so the review expires: -32603. When the
// folder is put back, edited, the watcher reloads it and its deny decides.
func TestFaultPolicyDirDeleted(t *testing.T) {
	t.Parallel()
	r := newFaultRig(t, 3*time.Second)
	h := r.serve(t, answerWith(hostAnswer))
	checkServing(t, h, "peer")
	if err := os.RemoveAll(r.policies); err != nil {
		t.Fatal(err)
	}
	r.log.wait(t, "policy reload failed; the previous policy keeps deciding", "no such file or directory")

	checkServing(t, h, "peer", "spare")
	checkOutcome(t, faultSample(t.Context(), h, "peer", overCapRequest), -1, "denied by policy")
	call := sampleAsync(t.Context(), h, "peer", secretRequest)
	id := r.pending(t)
	res := runCLI(t, "review", "approve", id, "--config", r.cfg)
	if res.code != 1 || !strings.Contains(res.stderr, "policy.dir") {
		t.Errorf("review approve with the policy dir gone: exit %d, %q; want refused naming policy.dir", res.code, res.stderr)
	}
	checkOutcome(t, receive(t, call, "escalation's end"), -32603, "expired after 3s awaiting review")
	if it := r.item(t, id); it.State != review.StateExpired {
		t.Errorf("review %s is %s; want expired", id, it.State)
	}
	asked := len(h.Asked)

	// The folder comes back with a policy that denies everything from peer.
	if out, err := exec.Command("cp", "-R", repoPath(t, "policies"), r.policies).CombinedOutput(); err != nil {
		t.Fatalf("restore the policies: %v: %s", err, out)
	}
	writeFile(t, r.policies, "servers/peer.rego", "package mcpxfw.servers.peer\n\ndeny contains {\"code\": \"closed\", \"message\": \"closed for maintenance\"} if true\n")
	t.Run("the restored folder is picked up", func(t *testing.T) {
		r.log.wait(t, `"msg":"policy reloaded"`, `"revision":"`+r.policyRevision(t)+`"`)
		checkOutcome(t, faultSample(t.Context(), h, "peer", plainRequest), -1, "denied by policy")
		noneAsked(t, h, asked)
	})
	r.checkStore(t)
}

// TestFaultClockJumps: the wall clock steps while a review waits. Forward
// past its deadline: the review expires at serve's next poll, -32603
// naming the expiry, and cannot be approved. Back by an hour (here, with
// a 3s timeout): it still expires after 3s, not an hour later, and serve
// logs that the clock was set back. See the file comment for why the
// store's deadline is moved instead of the clock.
func TestFaultClockJumps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		timeout time.Duration
		step    time.Duration // the clock step: expires_at moves by -step
		within  time.Duration // the upstream's answer comes within this
		wantLog string
	}{
		{name: "forward past the deadline", timeout: 10 * time.Minute, step: 20 * time.Minute, within: 5 * time.Second,
			wantLog: `"state":"expired"`},
		{name: "back an hour", timeout: 3 * time.Second, step: -time.Hour, within: 8 * time.Second,
			wantLog: "the clock was set back"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newFaultRig(t, tc.timeout)
			h := r.serve(t, answerWith(hostAnswer))
			call := sampleAsync(t.Context(), h, "peer", secretRequest)
			id := r.pending(t)
			stepped := time.Now()
			db, err := sql.Open("sqlite", "file:"+filepath.Join(r.state, review.FileName)+"?_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("UPDATE items SET expires_at = expires_at - ? WHERE id = ?", int64(tc.step), id); err != nil {
				t.Fatal(err)
			}
			_ = db.Close()

			got := receive(t, call, "expiry")
			if took := time.Since(stepped); took > tc.within {
				t.Errorf("the upstream got its answer %v after the step; want within %v", took, tc.within)
			}
			checkOutcome(t, got, -32603, fmt.Sprintf("expired after %s awaiting review", tc.timeout))
			r.log.wait(t, id, tc.wantLog)
			if it := r.item(t, id); it.State != review.StateExpired {
				t.Errorf("review is %s; want expired", it.State)
			}
			r.refuseApproval(t, id, "expired")
			noneAsked(t, h, 0)
			checkServing(t, h, "peer", "spare")
			r.checkStore(t)
		})
	}
}

// TestFaultDiskFull: serve's files cannot grow (RLIMIT_FSIZE on the
// running process: every write past the limit fails with EFBIG, as on a
// full disk). An escalation fails closed (-32603 "review queue
// unavailable"), a deny is still a deny, the log says the store could not
// be written, tools keep working, and a review that was waiting when the
// disk filled is still there, and approvable, once space is back.
func TestFaultDiskFull(t *testing.T) {
	t.Parallel()
	r := newFaultRig(t, time.Minute)
	h := r.serve(t, answerWith(hostAnswer))
	checkServing(t, h, "peer")
	waiting := sampleAsync(t.Context(), h, "peer", secretRequest)
	id := r.pending(t)

	restore := setFileSizeLimit(t, h.PID(), 0)
	full := true
	t.Cleanup(func() {
		if full {
			restore()
		}
	})
	got := faultSample(t.Context(), h, "peer", secretRequest)
	checkOutcome(t, got, -32603, "review queue unavailable")
	r.log.wait(t, `"msg":"decision"`, faultDecisionID(t, got), `"outcome":"error"`, "could not be written (disk full")
	checkOutcome(t, faultSample(t.Context(), h, "peer", overCapRequest), -1, "denied by policy")
	if res, err := h.CallTool(t.Context(), "spare__echo", map[string]any{"text": "full"}); err != nil || res.Text != "full" {
		t.Errorf("spare__echo on a full disk: %+v, %v", res, err)
	}
	if it := r.item(t, id); it.State != review.StatePending {
		t.Errorf("the review waiting when the disk filled is %s; want still pending", it.State)
	}
	checkUnrecordedPass(t, faultSample(t.Context(), h, "spare", plainRequest))
	asked := len(h.Asked)

	restore()
	full = false
	if res := runCLI(t, "review", "approve", id, "--config", r.cfg); res.code != 0 {
		t.Fatalf("approving the review that waited through the fault: exit %d: %s", res.code, res.stderr)
	}
	checkOutcome(t, receive(t, waiting, "approved sample"), 0, "")
	if it := r.item(t, id); it.State != review.StateDelivered {
		t.Errorf("review %s is %s; want delivered", id, it.State)
	}
	if len(h.Asked) <= asked {
		t.Error("the approved request did not reach the host's model")
	}
	checkServing(t, h, "peer", "spare")
	r.checkStore(t)
}

// setFileSizeLimit sets the soft RLIMIT_FSIZE of a running process (the
// hard limit stays as it was) and returns what restores the old limit.
func setFileSizeLimit(t *testing.T, pid int, limit uint64) (restore func()) {
	t.Helper()
	var old syscall.Rlimit
	prlimit(t, pid, nil, &old)
	prlimit(t, pid, &syscall.Rlimit{Cur: min(limit, old.Max), Max: old.Max}, nil)
	return func() { prlimit(t, pid, &old, nil) }
}

// prlimit is prlimit(2) for RLIMIT_FSIZE, which the syscall package does
// not wrap: allowed without privilege on a process of one's own.
func prlimit(t *testing.T, pid int, set, old *syscall.Rlimit) {
	t.Helper()
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(syscall.RLIMIT_FSIZE),
		uintptr(unsafe.Pointer(set)), uintptr(unsafe.Pointer(old)), 0, 0)
	if errno != 0 {
		t.Fatalf("prlimit(%d, RLIMIT_FSIZE): %v", pid, errno)
	}
}
