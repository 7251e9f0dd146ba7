package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// legacyServers is the servers: section of the handover tests: one test
// upstream that speaks 2025-11-25 and pushes, so a 2026-07-28 host's call
// of its sample tool is bridged.
func legacyServers() string {
	return peerServer("peer", 1000) + "    protocol: legacy\n"
}

// handoverCalls is how many calls TestReplicasBridgedHandover makes:
// 200, or MCPXFW_HANDOVER_CALLS. Each bridged call starts an upstream
// process of its own; 1,000 take 37-48 s on two cores, more than the
// replica tests' minute of the suite allows.
func handoverCalls(t *testing.T) int {
	t.Helper()
	v := os.Getenv("MCPXFW_HANDOVER_CALLS")
	if v == "" {
		return 200
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 10 {
		t.Fatalf("MCPXFW_HANDOVER_CALLS=%q: want a number of calls, at least 10", v)
	}
	return n
}

// handoverConcurrency is how many calls are under way at once.
const handoverConcurrency = 32

// bridgedLimits lifts the bridged calls' limits: a bridged call keeps its
// place until its upstream's process has exited, a second or more after
// its result.
const bridgedLimits = "  max_bridged_calls: 100000\n  max_bridged_calls_per_server: 100000\n"

// TestReplicasBridgedHandover: three `serve --http` replicas on one
// PostgreSQL store and seal key, behind a front that sends every request
// to the next replica and every retry to a replica other than the one
// that handed its state out. 2026-07-28 hosts call the sample tool of a
// legacy upstream, which pushes sampling/createMessage: each call is
// bridged on the replica it reaches (the holder), and its retry, carrying
// the host's completion, reaches another, which hands it to the holder.
// Half the pushes pass the policy, half are escalated and approved by an
// operator. Every call completes once, with the completion the upstream
// got back (the host's answer to that very request), none is refused
// (for bridge-elsewhere or anything else), the host is asked once per
// call, and no replica logs an error.
func TestReplicasBridgedHandover(t *testing.T) {
	calls := handoverCalls(t)
	storeURL := newDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	rs := startReplicasOf(t, replicaCount, storeURL, 10*time.Minute, legacyServers(), bridgedLimits, sharedSealKey(t))
	f := newFront(t, rs)
	f.elsewhere = true
	run := newLoadRun()
	hosts := connectHandoverHosts(t, ctx, f, run, 4)
	st := openURLStore(t, storeURL)
	opCtx, stopOperator := context.WithCancel(ctx)
	operated := run.operate(opCtx, st, cancel)
	defer func() {
		if t.Failed() {
			replicaLogs(t, rs)
		}
	}()

	kinds := []*loadKind{kindNamed(t, "permit"), kindNamed(t, "approve")}
	start := time.Now()
	reqs := run.bridgedCalls(t, ctx, hosts, kinds, calls)
	took := time.Since(start)
	stopOperator()
	if err := <-operated; err != nil {
		t.Error(err)
	}
	t.Logf("%d bridged calls (permitted and escalated-then-approved in turn, %d at once) through %d replicas in %v; retries on the replica that handed out their state: %d, on another: %d; requests routed %v",
		calls, handoverConcurrency, len(rs), took.Round(time.Millisecond), f.resumedSame.Load(), f.resumedElsewhere.Load(), f.routedCounts())
	if same, elsewhere := f.resumedSame.Load(), f.resumedElsewhere.Load(); same != 0 || elsewhere != int64(calls) {
		t.Errorf("retries: %d on the holder, %d on another replica; want 0 and %d", same, elsewhere, calls)
	}
	checkExactly(t, run, reqs, "bridged and handed over")
	checkAskedOnce(t, run, reqs)
	for _, r := range rs {
		checkServeLog(t, filepath.Join(r.dir, "serve.log"))
	}
}

// connectHandoverHosts connects n 2026-07-28 hosts through the front.
func connectHandoverHosts(t *testing.T, ctx context.Context, f *front, run *loadRun, n int) []*peer.Host {
	t.Helper()
	var hosts []*peer.Host
	for range n {
		h, err := peer.ConnectHTTP(ctx, f.URL(), peer.HostOptions{Answer: run.answer, Tools: true, ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatalf("connect a 2026-07-28 host through the front: %v", err)
		}
		t.Cleanup(func() { _ = h.Close() })
		hosts = append(hosts, h.Host)
	}
	return hosts
}

// bridgedCalls makes n calls of the sample tool, handoverConcurrency at
// once, spread over hosts, kinds in turn, and records what the upstream
// got back for each.
func (r *loadRun) bridgedCalls(t *testing.T, ctx context.Context, hosts []*peer.Host, kinds []*loadKind, n int) []*loadRequest {
	t.Helper()
	reqs := make([]*loadRequest, n)
	for i := range reqs {
		reqs[i] = &loadRequest{id: fmt.Sprintf("ld-%d-%04d", i%len(hosts), i), kind: kinds[i%len(kinds)]}
		r.requests[reqs[i].id] = reqs[i]
	}
	next := make(chan *loadRequest)
	var wg sync.WaitGroup
	for w := range handoverConcurrency {
		h := hosts[w%len(hosts)]
		wg.Go(func() {
			for q := range next {
				o, err := bridgedSample(ctx, h, json.RawMessage(fmt.Sprintf(q.kind.params, q.id)))
				if err != nil {
					t.Errorf("%s: %v", q.id, err)
					continue
				}
				r.mu.Lock()
				q.got = append(q.got, o)
				r.mu.Unlock()
			}
		})
	}
	for _, q := range reqs {
		next <- q
	}
	close(next)
	wg.Wait()
	return reqs
}

// bridgedSample calls the sample tool with params and reads what the
// upstream got back, or the JSON-RPC error the call failed with.
func bridgedSample(ctx context.Context, h *peer.Host, params json.RawMessage) (peer.SampleOutcome, error) {
	res, err := h.CallTool(ctx, "sample", map[string]any{"params": params})
	var pe *peer.Error
	if errors.As(err, &pe) {
		return peer.SampleOutcome{Error: pe}, nil
	}
	if err != nil {
		return peer.SampleOutcome{}, err
	}
	var got peer.SampleOutcome
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil || res.IsError {
		return peer.SampleOutcome{}, fmt.Errorf("sample: %.300s (%v)", res.Text, err)
	}
	return got, nil
}

// TestReplicasHandoverHolderKilled: a 2026-07-28 host's call is bridged
// on one replica (the holder), which hands out its input request; before
// the host retries, the holder, which also holds another call's escalated
// push for review, is killed with SIGKILL. The retry, sent to another
// replica, fails at once, long before the holder's lease runs out, with
// -32603 naming the holder as gone; the other call's review is abandoned
// once the lease lapses; nothing is delivered afterwards: the host is
// asked for neither call again, and the abandoned review never becomes
// delivered.
func TestReplicasHandoverHolderKilled(t *testing.T) {
	const lease = 3 * time.Second
	storeURL := newDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rs := startReplicasOf(t, replicaCount, storeURL, 10*time.Minute, legacyServers(), bridgedLimits, fmt.Sprintf("  lease: %s\n", lease)+sharedSealKey(t))
	f := newFront(t, rs)
	f.elsewhere = true
	run := newLoadRun()
	st := openURLStore(t, storeURL)
	defer func() {
		if t.Failed() {
			replicaLogs(t, rs)
		}
	}()

	type kill struct {
		victim int
		at     time.Time
		err    error
	}
	kills := make(chan kill, 1)
	held := make(chan error, 1)
	// The host's model answers once the holder is dead: its retry comes
	// after the kill.
	answer := func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		victim, err := handedBy(f)
		if err == nil {
			go func() { held <- holdOn(ctx, rs[victim], run) }()
			err = awaitPending(ctx, st)
		}
		if err == nil {
			err = rs[victim].cmd.Process.Kill()
		}
		f.remove(victim)
		kills <- kill{victim, time.Now(), err}
		return run.answer(ctx, params)
	}
	h, err := peer.ConnectHTTP(ctx, f.URL(), peer.HostOptions{Answer: answer, Tools: true, ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, err = h.CallTool(ctx, "sample", map[string]any{"params": json.RawMessage(fmt.Sprintf(kindNamed(t, "permit").params, "ld-0-0000"))})
	var k kill
	select {
	case k = <-kills:
	default:
		t.Fatalf("the call ended before its input request was answered: %v", err)
	}
	if k.err != nil {
		t.Fatal(k.err)
	}
	victim, failed := k.victim, time.Since(k.at)
	var pe *peer.Error
	if !errors.As(err, &pe) || pe.Code != -32603 || !strings.Contains(pe.Message, "holding the bridged call is gone") {
		t.Fatalf("the retry after the holder was killed: %v; want -32603 naming the holder gone", err)
	}
	t.Logf("replica %d killed; the retry failed %v later: %s", victim, failed.Round(time.Millisecond), pe.Message)
	if failed >= lease {
		t.Errorf("the retry failed %v after the kill, after the holder's lease (%v) ran out: want it at once", failed, lease)
	}
	if err := <-held; err == nil {
		t.Error("the call held for review on the killed replica completed")
	}
	items, err := st.List(ctx, review.Filter{All: true})
	if err != nil || len(items) != 1 {
		t.Fatalf("reviews: %d, %v; want the held call's one", len(items), err)
	}
	waitSettled(t, ctx, st, []string{items[0].ID})
	if it, err := st.Get(ctx, items[0].ID); err != nil || it.State != review.StateAbandoned {
		t.Errorf("the killed replica's review: %s, %v; want abandoned", it.State, err)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.asked["ld-0-0000"] != 1 || run.asked["ld-1-0000"] != 0 {
		t.Errorf("the host was asked %v; want once for the handed-out call, never for the held one", run.asked)
	}
}

// handedBy is the replica that handed out the one requestState the front
// has seen.
func handedBy(f *front) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, i := range f.handed {
		if len(f.handed) == 1 {
			return i, nil
		}
	}
	return -1, fmt.Errorf("the front saw %d requestStates handed out, want 1", len(f.handed))
}

// awaitPending waits until a review is pending.
func awaitPending(ctx context.Context, st *review.Store) error {
	for ctx.Err() == nil {
		items, err := st.List(ctx, review.Filter{})
		if err != nil || len(items) > 0 {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ctx.Err()
}

// holdOn has a 2025-11-25 host of r make a call whose push the policy
// escalates, and returns how it ended: an error, since nobody decides it.
func holdOn(ctx context.Context, r *replica, run *loadRun) error {
	h, err := peer.ConnectHTTP(ctx, r.url, peer.HostOptions{Answer: run.answer})
	if err != nil {
		return err
	}
	defer h.Close()
	out, err := h.Sample(ctx, json.RawMessage(fmt.Sprintf(loadKinds[3].params, "ld-1-0000")))
	if err == nil && out.Error == nil {
		return nil
	}
	return errors.Join(err, errors.New("no completion"))
}

// TestReplicasHandoverReplayed: a 2026-07-28 host's retry of a bridged
// call is sent at once to both replicas that do not hold the call: one
// hands it over and gets the upstream's result, which the host gets; the
// other is refused as a used state. The upstream resumes once: the host
// was asked once, and its completion is the one the upstream got back.
func TestReplicasHandoverReplayed(t *testing.T) {
	storeURL := newDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rs := startReplicasOf(t, replicaCount, storeURL, 10*time.Minute, legacyServers(), bridgedLimits, sharedSealKey(t))
	f := newFront(t, rs)
	replay := &replayFront{front: f}
	srv := httptest.NewServer(replay)
	t.Cleanup(srv.Close)
	run := newLoadRun()
	h, err := peer.ConnectHTTP(ctx, srv.URL+"/mcp", peer.HostOptions{Answer: run.answer, Tools: true, ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	q := &loadRequest{id: "ld-0-0000", kind: kindNamed(t, "permit")}
	run.requests[q.id] = q
	o, err := bridgedSample(ctx, h.Host, json.RawMessage(fmt.Sprintf(q.kind.params, q.id)))
	if err != nil {
		t.Fatal(err)
	}
	q.got = append(q.got, o)
	checkExactly(t, run, []*loadRequest{q}, "replayed on two replicas")
	checkAskedOnce(t, run, []*loadRequest{q})
	replay.mu.Lock()
	defer replay.mu.Unlock()
	if replay.replays != 1 || !strings.Contains(replay.other, "already used") {
		t.Errorf("%d retries replayed; the other copy got %.300s; want one, refused as already used", replay.replays, replay.other)
	}
}

// replayFront is a front that sends each retry carrying a requestState to
// both replicas that did not hand it out, at once, and gives the host
// the answer that is not an error; it keeps the other.
type replayFront struct {
	*front
	mu      sync.Mutex
	replays int
	other   string
}

func (rf *replayFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	from := -1
	if modernRequest(r.Header) && r.Body != nil {
		from, _ = rf.handedFrom(r)
	}
	if from < 0 {
		rf.front.ServeHTTP(w, r)
		return
	}
	body, _ := readAllBody(r)
	var recs []*httptest.ResponseRecorder
	var wg sync.WaitGroup
	for i := range rf.backends {
		if i == from {
			continue
		}
		rec := httptest.NewRecorder()
		recs = append(recs, rec)
		req := r.Clone(r.Context())
		req.Body = bodyOf(body)
		wg.Go(func() { rf.backends[i].ServeHTTP(rec, req) })
	}
	wg.Wait()
	win, lose := recs[0], recs[1]
	if strings.Contains(win.Body.String(), `"error"`) {
		win, lose = lose, win
	}
	rf.mu.Lock()
	rf.replays++
	rf.other = lose.Body.String()
	rf.mu.Unlock()
	for k, v := range win.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(win.Code)
	_, _ = w.Write(win.Body.Bytes())
}

// checkAskedOnce: the host was asked exactly once for each of reqs.
func checkAskedOnce(t *testing.T, run *loadRun, reqs []*loadRequest) {
	t.Helper()
	run.mu.Lock()
	defer run.mu.Unlock()
	bad := 0
	for _, q := range reqs {
		if n := run.asked[q.id]; n != 1 {
			if bad++; bad <= 3 {
				t.Errorf("%s: the host was asked %d times, want once", q.id, n)
			}
		}
	}
	if bad > 3 {
		t.Errorf("... and %d more asked other than once", bad-3)
	}
}

// readAllBody reads r's body whole and closes it.
func readAllBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	return b, err
}

// bodyOf is b as a request's body.
func bodyOf(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
