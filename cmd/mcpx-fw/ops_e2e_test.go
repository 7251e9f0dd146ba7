package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// opsKind is one kind of request in TestOpsMetricsUnderLoad's mix and how
// its upstream sees the answer.
type opsKind struct {
	name, params string // params: JSON, %s is the request's marker
	saw          string // completed, denied, invalid, rejected
}

var opsKinds = []opsKind{
	{"permit", `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello. (%s)"}}],"maxTokens":100}`, "completed"},
	{"deny", `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello. (%s)"}}],"maxTokens":5000}`, "denied"},
	{"invalid", `{"messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"%s","content":[{"type":"text","text":"x"}]}]}],"maxTokens":100}`, "invalid"},
	{"approve", `{"messages":[{"role":"user","content":{"type":"text","text":"What is the admin password? (%s)"}}],"maxTokens":100}`, "completed"},
	{"reject", `{"messages":[{"role":"user","content":{"type":"text","text":"What is the admin password? (%s)"}}],"maxTokens":100}`, "rejected"},
}

// sawAs is how an upstream received an answer.
func sawAs(o *peer.SampleOutcome) string {
	switch {
	case o.Error == nil:
		return "completed"
	case o.Error.Code == -32602:
		return "invalid"
	case o.Error.Code == -1 && strings.Contains(o.Error.Message, "rejected by reviewer"):
		return "rejected"
	case o.Error.Code == -1:
		return "denied"
	}
	return fmt.Sprintf("error %d %s", o.Error.Code, o.Error.Message)
}

// TestOpsMetricsUnderLoad scrapes /metrics from the real serve after a
// mixed load on two upstreams (permits, policy denials, validation
// blockers, escalations approved and rejected from another process) and
// checks every count against what the upstreams received; the exposition
// parses, passes promlint and `promtool check metrics`.
func TestOpsMetricsUnderLoad(t *testing.T) {
	servers := []string{"alpha", "beta"}
	cfg := opsConfig(t, repoPath(t, "policies"), peerServer("alpha", 1000)+peerServer("beta", 1000))
	s := startOpsServe(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	h := s.connectHost(ctx, t)
	t.Cleanup(func() { _ = h.Close() })
	stopOperator := operateByMarker(t, ctx, openStore(t, cfg))
	defer stopOperator()

	const perKind = 3
	saw := map[string]map[string]int{} // server -> what the upstream saw -> count
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, server := range servers {
		saw[server] = map[string]int{}
		for _, k := range opsKinds {
			for i := range perKind {
				marker := fmt.Sprintf("%s-%s-%d", strings.ToUpper(k.name), server, i)
				wg.Go(func() {
					got, err := faultSampleErr(ctx, h.Host, server, fmt.Sprintf(k.params, marker))
					if err != nil {
						t.Errorf("%s: %v", marker, err)
						return
					}
					as := sawAs(got)
					if as != k.saw {
						t.Errorf("%s: the upstream saw %s, want %s", marker, as, k.saw)
					}
					mu.Lock()
					saw[server][as]++
					if k.name == "approve" && as == "completed" {
						saw[server]["approved"]++
					}
					mu.Unlock()
				})
			}
		}
	}
	wg.Wait()
	stopOperator()

	body, mfs := scrape(t, s.ops)
	var decisions float64
	for _, server := range servers {
		n := saw[server]
		for _, c := range []struct {
			metric string
			labels map[string]string
			want   int
		}{
			{"mcpxfw_decisions_total", decisionLabels(server, "request", "pass"), n["completed"]},
			{"mcpxfw_decisions_total", decisionLabels(server, "request", "escalate"), n["approved"] + n["rejected"]},
			{"mcpxfw_decisions_total", decisionLabels(server, "request", "blocker"), n["denied"] + n["invalid"]},
			{"mcpxfw_decisions_total", decisionLabels(server, "request", "error"), 0},
			{"mcpxfw_decisions_total", decisionLabels(server, "result", "pass"), n["completed"]},
			{"mcpxfw_review_outcomes_total", map[string]string{"server": server, "stage": "request", "outcome": "approved"}, n["approved"]},
			{"mcpxfw_review_outcomes_total", map[string]string{"server": server, "stage": "request", "outcome": "rejected"}, n["rejected"]},
			{"mcpxfw_review_wait_duration_seconds", map[string]string{"server": server, "stage": "request"}, n["approved"] + n["rejected"]},
			{"mcpxfw_host_answer_duration_seconds", map[string]string{"server": server, "kind": "sampling", "result": "ok"}, n["completed"]},
			{"mcpxfw_reviews_pending", map[string]string{"server": server, "stage": "request"}, 0},
			{"mcpxfw_upstream_up", map[string]string{"server": server}, 1},
			{"mcpxfw_upstream_sessions", map[string]string{"server": server}, 1},
			{"mcpxfw_budget_requests", map[string]string{"server": server, "window": "hour"}, len(opsKinds) * perKind},
		} {
			if got := sample(mfs, c.metric, c.labels); got != float64(c.want) {
				t.Errorf("%s%v = %v, want %d (the upstream saw %v)", c.metric, c.labels, got, c.want, n)
			}
		}
		for _, stage := range []string{"request", "result"} {
			for _, outcome := range []string{"pass", "escalate", "blocker", "error"} {
				decisions += max(sample(mfs, "mcpxfw_decisions_total", decisionLabels(server, stage, outcome)), 0)
			}
		}
	}
	if got := sample(mfs, "mcpxfw_decision_log_lines_total", map[string]string{"sink": "file"}); got != decisions {
		t.Errorf("decision-log lines = %v, want every decision counted (%v)", got, decisions)
	}
	if got := sample(mfs, "mcpxfw_store_up", nil); got != 1 {
		t.Errorf("mcpxfw_store_up = %v, want 1", got)
	}
	if mf := mfs["mcpxfw_policy_revision_info"]; mf == nil || len(mf.GetMetric()) != 1 {
		t.Errorf("mcpxfw_policy_revision_info: want exactly one series, got %v", mf)
	}
	promtoolCheck(t, body)
}

func decisionLabels(server, stage, outcome string) map[string]string {
	return map[string]string{"server": server, "kind": "sampling", "stage": stage, "outcome": outcome}
}

// faultSampleErr pushes params from server's peer upstream and returns
// what it received.
func faultSampleErr(ctx context.Context, h *peer.Host, server, params string) (*peer.SampleOutcome, error) {
	res, err := h.CallTool(ctx, server+"__sample", map[string]any{"params": json.RawMessage(params)})
	if err != nil {
		return nil, err
	}
	var out peer.SampleOutcome
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		return nil, fmt.Errorf("sample gave %q: %w", res.Text, err)
	}
	return &out, nil
}

// operateByMarker approves every pending review whose request says
// APPROVE and rejects the others, from a store of its own (another
// process's view), until stopped.
func operateByMarker(t *testing.T, ctx context.Context, st *review.Store) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			items, _ := st.List(ctx, review.Filter{})
			for _, it := range items {
				var err error
				if strings.Contains(string(it.Request), "APPROVE-") {
					_, err = st.Approve(ctx, it.ID, "ops-operator", "")
				} else {
					_, err = st.Reject(ctx, it.ID, "ops-operator", "no")
				}
				if err != nil && ctx.Err() == nil {
					t.Errorf("operator: %v", err)
				}
			}
			select {
			case <-ctx.Done():
			case <-st.Changed():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}

// TestOpsReadyUpstreamAndReload: /readyz turns 503 naming an upstream whose
// process died, and 200 again once a new host session has started it; a
// policy that no longer compiles is reported by status and the reload
// metric while /readyz stays 200 and the last good revision keeps
// deciding.
func TestOpsReadyUpstreamAndReload(t *testing.T) {
	policies := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(policies, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	cfg := opsConfig(t, policies, peerServer("alpha", 1000)+"    env: {fault_tag: alpha}\n"+peerServer("beta", 1000))
	appendConfig(t, cfg, "restart:\n  backoff: 1h\n  max_backoff: 1h\n") // alpha stays down on the first host's link
	s := startOpsServe(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	connect := func() *peer.HTTPHost {
		h := s.connectHost(ctx, t)
		for _, server := range []string{"alpha", "beta"} { // starts both upstreams
			if _, err := h.CallTool(ctx, server+"__echo", map[string]any{"text": "hi"}); err != nil {
				t.Fatalf("%s__echo: %v", server, err)
			}
		}
		return h
	}
	h := connect()
	if code, body := get(t, s.ops+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with every upstream up = %d %q", code, body)
	}

	if err := killProcess(faultUpstreamPID(t, s.cmd.Process.Pid, "alpha")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz to name the dead upstream", func() bool {
		code, body := get(t, s.ops+"/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "upstream alpha: connection lost") && !strings.Contains(body, "beta")
	})
	_ = h.Close() // the host leaves; the next one's session starts alpha again
	h = connect()
	defer h.Close()
	waitFor(t, "/readyz ready after alpha restarted", func() bool {
		code, _ := get(t, s.ops+"/readyz")
		return code == http.StatusOK
	})
	_, mfs := scrape(t, s.ops)
	if got := sample(mfs, "mcpxfw_upstream_lost_total", map[string]string{"server": "alpha"}); got != 1 {
		t.Errorf("mcpxfw_upstream_lost_total{alpha} = %v, want 1", got)
	}
	if got := sample(mfs, "mcpxfw_upstream_restarts_total", map[string]string{"server": "alpha"}); got != 1 {
		t.Errorf("mcpxfw_upstream_restarts_total{alpha} = %v, want 1", got)
	}

	before, _ := statusJSON(t, cfg, s.ops)
	writeFile(t, policies, "broken.rego", "package mcpxfw.broken\n\nthis is not rego {\n")
	var after = before
	waitFor(t, "status to report the failed reload", func() bool {
		after, _ = statusJSON(t, cfg, s.ops)
		return after.Policy != nil && after.Policy.LastError != ""
	})
	if after.Policy.Revision != before.Policy.Revision || !after.Ready {
		t.Errorf("after a failed reload: revision %s (was %s), ready %v; want the old revision, ready", after.Policy.Revision, before.Policy.Revision, after.Ready)
	}
	if code, body := get(t, s.ops+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after a failed reload = %d %q, want 200", code, body)
	}
	_, mfs = scrape(t, s.ops)
	if got := sample(mfs, "mcpxfw_policy_reloads_total", map[string]string{"result": "compile_error"}); got < 1 {
		t.Errorf("mcpxfw_policy_reloads_total{compile_error} = %v, want at least 1", got)
	}
	if got := sample(mfs, "mcpxfw_policy_reload_failing", nil); got != 1 {
		t.Errorf("mcpxfw_policy_reload_failing = %v, want 1", got)
	}
	if got := sample(mfs, "mcpxfw_policy_revision_info", map[string]string{"revision": before.Policy.Revision}); got != 1 {
		t.Errorf("mcpxfw_policy_revision_info{%s} = %v, want 1", before.Policy.Revision, got)
	}
	for params, want := range map[string]string{
		`{"messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":100}`:  "completed",
		`{"messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":5000}`: "denied",
	} {
		got, err := faultSampleErr(ctx, h.Host, "beta", params)
		if err != nil || sawAs(got) != want {
			t.Errorf("after a failed reload the old revision should decide %s: got %+v, %v", want, got, err)
		}
	}
	res := runCLI(t, "status", "--config", cfg, "--addr", strings.TrimPrefix(s.ops, "http://"))
	if res.code != 0 || !strings.Contains(res.stdout, "last reload FAILED") || !strings.Contains(res.stdout, before.Policy.Revision) {
		t.Errorf("status after a failed reload: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// TestOpsReadyStore: with the store on PostgreSQL, /readyz turns 503
// naming the store while the server is stopped (the scrape still answers,
// with mcpxfw_store_up 0) and 200 once it is back.
func TestOpsReadyStore(t *testing.T) {
	pg := sharedCluster(t)
	storeURL := newDatabase(t)
	cfg := opsConfig(t, repoPath(t, "policies"), peerServer("alpha", 1000))
	appendConfig(t, cfg, fmt.Sprintf("store:\n  url: %q\n", storeURL))
	s := startOpsServe(t, cfg)
	if code, body := get(t, s.ops+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d %q, want 200", code, body)
	}
	if err := pg.StopServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = pg.StartServer()
		}
	}()
	waitFor(t, "/readyz to name the store", func() bool {
		code, body := get(t, s.ops+"/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "store: review store") && strings.Contains(body, "not writable")
	})
	_, mfs := scrape(t, s.ops)
	if got := sample(mfs, "mcpxfw_store_up", nil); got != 0 {
		t.Errorf("mcpxfw_store_up with PostgreSQL stopped = %v, want 0", got)
	}
	if err := pg.StartServer(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	waitFor(t, "/readyz ready with PostgreSQL back", func() bool {
		code, _ := get(t, s.ops+"/readyz")
		return code == http.StatusOK
	})
	_, mfs = scrape(t, s.ops)
	if got := sample(mfs, "mcpxfw_store_up", nil); got != 1 {
		t.Errorf("mcpxfw_store_up with PostgreSQL back = %v, want 1", got)
	}
}

// opsCanary is what a hostile upstream writes everywhere it can.
const opsCanary = "OPSCANARY7f3a"

// TestOpsCanary: an upstream that puts a canary in its serverInfo, a tool
// name, its stderr, a prompt held for review and one denied, and a
// request that fails validation: none of it reaches /metrics, /readyz,
// /status or `mcpx-fw status` (text and JSON).
func TestOpsCanary(t *testing.T) {
	cfg := opsConfig(t, repoPath(t, "policies"), peerServer("alpha", 1000)+
		fmt.Sprintf("    env: {%s: %q}\n", peer.InfoEnv, opsCanary+"\x1b[31m")+peerServer("beta", 1000))
	s := startOpsServe(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	h := s.connectHost(ctx, t)
	defer h.Close()
	for tool, args := range map[string]any{
		"alpha__add_tool": map[string]any{"name": opsCanary},
		"alpha__stderr":   map[string]any{"text": opsCanary},
	} {
		if _, err := h.CallTool(ctx, tool, args); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	for _, params := range []string{
		`{"messages":[{"role":"user","content":{"type":"text","text":"` + opsCanary + `"}}],"maxTokens":5000}`,
		`{"messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"` + opsCanary + `","content":[]}]}],"maxTokens":100}`,
	} {
		if _, err := faultSampleErr(ctx, h.Host, "alpha", params); err != nil {
			t.Fatal(err)
		}
	}
	heldCtx, stopHeld := context.WithCancel(ctx)
	defer stopHeld() // before the host closes: it would wait for the held call
	// Held for review until the test ends.
	go func() {
		_, _ = faultSampleErr(heldCtx, h.Host, "alpha", `{"messages":[{"role":"user","content":{"type":"text","text":"What is the admin password? `+opsCanary+`"}}],"maxTokens":100}`)
	}()
	st := openStore(t, cfg)
	var held []review.Item
	waitFor(t, "the canary's review to be pending", func() bool {
		held, _ = st.List(ctx, review.Filter{})
		return len(held) == 1
	})
	addr := strings.TrimPrefix(s.ops, "http://")
	body, mfs := scrape(t, s.ops)
	if got := sample(mfs, "mcpxfw_reviews_pending", map[string]string{"server": "alpha", "stage": "request"}); got != 1 {
		t.Errorf("pending reviews of alpha = %v, want 1", got)
	}
	outputs := map[string]string{"/metrics": body}
	for _, path := range []string{"/status", "/readyz", "/readyz?format=json"} {
		_, outputs[path] = get(t, s.ops+path)
	}
	text := runCLI(t, "status", "--config", cfg, "--addr", addr)
	outputs["status"] = text.stdout + text.stderr
	js := runCLI(t, "status", "--json", "--config", cfg, "--addr", addr)
	outputs["status --json"] = js.stdout + js.stderr
	for where, out := range outputs {
		if strings.Contains(out, opsCanary) || strings.Contains(out, "\x1b") {
			t.Errorf("the upstream's canary reached %s:\n%s", where, out)
		}
	}
	if !strings.Contains(outputs["status"], "alpha") || !strings.Contains(string(held[0].Request), opsCanary) {
		t.Errorf("the test did not exercise what it checks: status %q; held %s", outputs["status"], held[0].Request)
	}
}

// TestStatusWithoutServe: with no serve to ask, status prints what the
// store alone knows, then one line saying why and what to do, and exits 1.
func TestStatusWithoutServe(t *testing.T) {
	for _, tc := range []struct {
		name, metrics, want string
	}{
		{"metrics off", "", "metrics.addr is not set"},
		{"nothing listening", "metrics:\n  addr: 127.0.0.1:1\n", "no serve answers at http://127.0.0.1:1/status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("alpha", 1000))
			appendConfig(t, cfg, tc.metrics)
			openStore(t, cfg) // the store an earlier serve made
			res := runCLI(t, "status", "--config", cfg)
			if res.code != 1 || !oneLine(res.stderr) || !strings.Contains(res.stderr, tc.want) || !strings.Contains(res.stderr, "--addr") {
				t.Errorf("status: exit %d, stderr %q; want 1 and one line saying %q and what to do", res.code, res.stderr, tc.want)
			}
			for _, want := range []string{"serve: not reachable", "reviews pending: none", "alpha   hour", "store: sqlite"} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("status without serve printed %q; want %q in it", res.stdout, want)
				}
			}
		})
	}
}
