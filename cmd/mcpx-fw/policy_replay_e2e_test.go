package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// candidate is a copy of the shipped policies with the replay test's
// package file added: a policy folder as a team would write one.
func candidate(t *testing.T, file string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "replay", file))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, filepath.Join("servers", "replay_"+file), string(b))
	return dir
}

// replayServer is the test upstream as server peer, allowed one root.
func replayServer() string {
	return peerServer("peer", 1000) + "    roots:\n      allow: [file:///srv/e2e/allowed]\n"
}

// startReplayHost starts serve under a host that samples, answers forms
// and lists two roots.
func startReplayHost(t *testing.T, cfg string) *peer.Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, Answer: answerWith(hostAnswer),
		Tools: true, Roots: []string{"file:///srv/e2e/allowed", "file:///srv/e2e/other"},
		Elicit: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"action":"accept","content":{"colour":"red"}}`), nil
		}})
	if err != nil {
		t.Fatalf("start serve: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// replayCanary is prompt text an upstream sends: replay's output names
// decisions by id and reason codes, and never holds it.
const replayCanary = "REPLAY-CANARY-7f3a"

// replayCanaryRequest is a plain request carrying replayCanary and a terminal
// escape.
const replayCanaryRequest = `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello. ` + replayCanary + ` \u001b[2J"}}],"maxTokens":100}`

// replayTraffic sends sampling (passed, denied, held and approved from the
// CLI, invalid), a form and a roots request through serve: both stages of
// each kind that gets an answer.
func replayTraffic(t *testing.T, cfg string, h *peer.Host) {
	t.Helper()
	ctx := t.Context()
	for _, params := range []string{plainRequest, replayCanaryRequest, overCapRequest, danglingRequest} {
		if _, err := h.Sample(ctx, json.RawMessage(params)); err != nil {
			t.Fatal(err)
		}
	}
	held := make(chan *peer.SampleOutcome, 1)
	go func() { got, _ := h.Sample(ctx, json.RawMessage(secretRequest)); held <- got }()
	approveNext(t, cfg)
	if got := <-held; got == nil || got.Error != nil {
		t.Fatalf("the approved request: %+v", got)
	}
	for _, args := range []map[string]any{
		{"method": "elicitation/create", "params": json.RawMessage(plainForm)},
		{"method": "roots/list"},
	} {
		if res, err := h.CallTool(ctx, "ask", args); err != nil || res.IsError {
			t.Fatalf("ask %v: %+v, %v", args["method"], res, err)
		}
	}
}

// replayJSON runs policy replay --json with candidate dir and reads it.
func replayJSON(t *testing.T, cfg, dir string, extra ...string) (render.Replay, int) {
	t.Helper()
	res := runCLI(t, append([]string{"policy", "replay", "--candidate", dir, "--json", "--config", cfg}, extra...)...)
	if strings.Contains(res.stdout+res.stderr, replayCanary) {
		t.Errorf("replay printed the upstream's prompt text:\n%s%s", res.stdout, res.stderr)
	}
	var r render.Replay
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("replay --json: exit %d, %v: %s %s", res.code, err, res.stdout, res.stderr)
	}
	return r, res.code
}

// ownVerdicts is what the candidate in dir decides, evaluated by OPA on
// each kept input read from the store, grouped as replay groups them
// ("server kind stage active->candidate"), and the decisions kept without
// a document (decided before the policy ran).
func ownVerdicts(t *testing.T, cfg string, st *review.Store, dir string) (map[string]int, int) {
	t.Helper()
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.LoadPolicy(t.Context(), engine.PolicyConfig{Dir: dir, Timeout: 5 * time.Second, Data: policyData(c)})
	if err != nil {
		t.Fatal(err)
	}
	groups, none := map[string]int{}, 0
	err = st.Replay(t.Context(), review.ReplayFilter{}, func(r review.Replayed) error {
		switch {
		case !r.Kept:
			return nil
		case r.Input.Input == nil:
			none++
			return nil
		}
		dec := json.NewDecoder(bytes.NewReader(r.Input.Input))
		dec.UseNumber()
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			return err
		}
		d, err := p.Evaluate(t.Context(), doc)
		if err != nil {
			return err
		}
		in := r.Input
		groups[fmt.Sprintf("%s %s %s %s->%s", in.Server, in.Kind, in.Stage, in.Outcome, wordOf(d.Outcome, doc["approval"] != nil))]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return groups, none
}

// wordOf is the outcome word of a policy's decision; a review asked for
// again after an approval is an error.
func wordOf(o engine.Outcome, approved bool) string {
	if approved && o == engine.OutcomeEscalate {
		return "error"
	}
	return o.String()
}

// groupsOf is a replay's changes and unchanged outcomes, keyed as
// ownVerdicts keys them.
func groupsOf(r render.Replay) map[string]int {
	out := map[string]int{}
	for _, c := range r.Changes {
		out[fmt.Sprintf("%s %s %s %s->%s", c.Server, c.Kind, c.Stage, c.Active, c.Candidate)] += c.Count
	}
	for _, s := range r.Unchanged {
		out[fmt.Sprintf("%s %s %s %s->%s", s.Server, s.Kind, s.Stage, s.Outcome, s.Outcome)] += s.Count
	}
	return out
}

// storeState is what replay must leave as it was: every server's usage
// and the audit chain's length and head.
func storeState(t *testing.T, st *review.Store) string {
	t.Helper()
	u, err := st.UsageIn(t.Context(), "peer", engine.DefaultUsageWindows, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	head, n, err := st.VerifyAudit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("usage %+v, audit %d entries, head %+v", u, n, head)
}

// TestPolicyReplayGate: after traffic of every kind through serve, replay
// lists what a stricter and a looser candidate change, exactly as each
// candidate decides the kept inputs itself; the stricter passes the gate,
// the looser fails it with its loosened changes listed first; the
// decision made before the policy ran is counted and named; the
// upstream's prompt text never reaches the output; and replay changes
// neither usage nor the audit chain.
func TestPolicyReplayGate(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, replayServer())
	appendConfig(t, cfg, "replay:\n  keep: 72h\n")
	h := startReplayHost(t, cfg)
	replayTraffic(t, cfg, h)
	_ = h.Close() // serve writes the inputs it still holds as it stops
	st := openStore(t, cfg)
	before := storeState(t, st)

	stricter, looser := candidate(t, "stricter.rego"), candidate(t, "looser.rego")
	for _, tc := range []struct {
		name, dir string
		code      int
	}{{"stricter", stricter, 0}, {"looser", looser, exitGate}} {
		t.Run(tc.name, func(t *testing.T) {
			r, code := replayJSON(t, cfg, tc.dir)
			want, none := ownVerdicts(t, cfg, st, tc.dir)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if got := groupsOf(r); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("replay's groups:\n %v\nthe candidate's own verdicts:\n %v", got, want)
			}
			if len(r.NotKept) != 1 || r.NotKept[0].Cause != render.CauseBeforePolicy || r.NotKept[0].Count != none || none == 0 {
				t.Errorf("not kept = %+v; want the %d decision(s) made before the policy", r.NotKept, none)
			}
			if len(r.Changes) == 0 || r.Changes[0].Loosened != (tc.code != 0) {
				t.Errorf("changes = %+v; want them, loosened ones first", r.Changes)
			}
		})
	}
	res := runCLI(t, "policy", "replay", "--candidate", looser, "--config", cfg)
	first, _, _ := strings.Cut(res.stdout, "\n  ")
	if res.code != exitGate || !strings.Contains(first, "would let through") || !strings.Contains(res.stdout, "escalate -> pass") ||
		!oneLine(res.stderr) || strings.Contains(res.stdout, replayCanary) {
		t.Errorf("replay: exit %d\n%s\nstderr %q; want exit %d, what the looser lets through first", res.code, res.stdout, res.stderr, exitGate)
	}
	data, _ := replayJSON(t, cfg, looser)
	for _, c := range data.Changes {
		line := regexp.MustCompile(fmt.Sprintf(`(?m)^  %s +%s +%s +%s -> %s +%d +%s`, c.Server, c.Kind, c.Stage, c.Active, c.Candidate, c.Count, c.Examples[0]))
		if !line.MatchString(res.stdout) {
			t.Errorf("the text output has no line for --json's change %+v:\n%s", c, res.stdout)
		}
	}
	if res := runCLI(t, "policy", "replay", "--candidate", looser, "--fail-on", "never", "--config", cfg); res.code != 0 {
		t.Errorf("--fail-on never: exit %d, %s", res.code, res.stderr)
	}
	if res := runCLI(t, "policy", "replay", "--candidate", stricter, "--fail-on", "changed", "--config", cfg); res.code != exitGate {
		t.Errorf("--fail-on changed, stricter: exit %d, want %d", res.code, exitGate)
	}
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bare := runBare(t, t.TempDir(), []string{"MCPXFW_STATE_DIR=" + c.StateDir}, "policy", "replay", "--candidate", looser, "--json")
	var alone render.Replay
	if err := json.Unmarshal([]byte(bare.stdout), &alone); err != nil || alone.Decisions != data.Decisions || (bare.code != 0 && bare.code != exitGate) {
		t.Errorf("replay from MCPXFW_STATE_DIR alone: exit %d, %v, %d decisions, want %d; %s", bare.code, err, alone.Decisions, data.Decisions, bare.stderr)
	}
	if after := storeState(t, st); after != before {
		t.Errorf("replay changed the store:\n before %s\n after  %s", before, after)
	}
}

// TestPolicyReplayBrokenCandidate: a candidate that does not compile is
// one line naming it, exit 2; an unknown --fail-on is a usage error.
func TestPolicyReplayBrokenCandidate(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, replayServer())
	appendConfig(t, cfg, "replay:\n  keep: 72h\n")
	if res := runCLI(t, "store", "migrate", "--config", cfg); res.code != 0 {
		t.Fatal(res.stderr)
	}
	dir := candidate(t, "stricter.rego")
	writeFile(t, dir, "servers/broken.rego", "package mcpxfw.servers.broken\n\ndeny contains x if {\n")
	res := runCLI(t, "policy", "replay", "--candidate", dir, "--config", cfg)
	if res.code != exitUsage || !oneLine(res.stderr) || !strings.Contains(res.stderr, "does not compile") {
		t.Errorf("broken candidate: exit %d, stderr %q; want 2 and one line", res.code, res.stderr)
	}
	if res := runCLI(t, "policy", "replay", "--candidate", dir, "--fail-on", "sometimes", "--config", cfg); res.code != exitUsage {
		t.Errorf("--fail-on sometimes: exit %d, want 2", res.code)
	}
}

// decisionIDs are the decision ids in the decision log of the serve that
// ran with cfg (testConfig puts it beside the config).
func decisionIDs(t *testing.T, cfg string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		var ev struct {
			DecisionID string `json:"decision_id"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.DecisionID != "" {
			ids[ev.DecisionID] = true
		}
	}
	return ids
}

// TestPolicyReplayAcrossReplicas: two serve processes sharing one
// PostgreSQL store each decide a request; replay, from either config,
// re-decides both.
func TestPolicyReplayAcrossReplicas(t *testing.T) {
	storeURL := newDatabase(t)
	cfgs := make([]string, 2)
	for i := range cfgs {
		cfgs[i] = testConfig(t, repoPath(t, "policies"), time.Minute, replayServer())
		appendConfig(t, cfgs[i], "replay:\n  keep: 72h\n")
		appendConfig(t, cfgs[i], fmt.Sprintf("store:\n  url: %q\n", storeURL))
	}
	for _, cfg := range cfgs {
		h := startReplayHost(t, cfg)
		if got, err := h.Sample(t.Context(), json.RawMessage(plainRequest)); err != nil || got.Error != nil {
			t.Fatalf("sample through %s: %+v, %v", cfg, got, err)
		}
		_ = h.Close() // the decision log is complete once serve has exited
	}
	r, code := replayJSON(t, cfgs[1], candidate(t, "stricter.rego"))
	if code != 0 || len(r.Changes) != 1 || r.Changes[0].Count != 2 || r.Changes[0].Active != "pass" || r.Changes[0].Candidate != "blocker" {
		t.Fatalf("replay: exit %d, changes %+v; want both replicas' passes now blocked", code, r.Changes)
	}
	for i, cfg := range cfgs {
		ids := decisionIDs(t, cfg)
		if !anyOf(ids, r.Changes[0].Examples) {
			t.Errorf("replica %d's decisions %v are not among %v", i, ids, r.Changes[0].Examples)
		}
	}
}

// anyOf reports whether ids holds any of examples.
func anyOf(ids map[string]bool, examples []string) bool {
	for _, id := range examples {
		if ids[id] {
			return true
		}
	}
	return false
}

// replayNotKept runs replay --json with MCPXFW_REPLAY_KEEP=keep and
// returns how many decisions it found and how many had no input kept.
func replayNotKept(t *testing.T, cfg, keep string) (decisions, notKept int) {
	t.Helper()
	cmd := exec.Command(binary, "policy", "replay", "--candidate", repoPath(t, "policies"), "--since", "1h", "--json", "--config", cfg)
	cmd.Env = append(os.Environ(), "MCPXFW_REPLAY_KEEP="+keep)
	res := mustRun(t, cmd)
	var r render.Replay
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || res.code != 0 {
		t.Fatalf("replay: exit %d, %v: %s", res.code, err, res.stderr)
	}
	for _, n := range r.NotKept {
		if n.Cause == render.CauseNotKept {
			notKept += n.Count
		}
	}
	return r.Decisions, notKept
}

// TestReplayKeep: serve with replay.keep 0 keeps no input; with it on,
// every decision's input is kept, and `review prune` deletes those older
// than replay.keep.
func TestReplayKeep(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, replayServer())
	appendConfig(t, cfg, "replay:\n  keep: 72h\n")
	for _, keep := range []string{"0", "72h"} {
		t.Setenv("MCPXFW_REPLAY_KEEP", keep) // serve reads it
		h := startFirewall(t, cfg, answerWith(hostAnswer))
		if got, err := h.Sample(t.Context(), json.RawMessage(plainRequest)); err != nil || got.Error != nil {
			t.Fatalf("sample: %+v, %v", got, err)
		}
		_ = h.Close()
	}
	if decisions, notKept := replayNotKept(t, cfg, "72h"); decisions != 4 || notKept != 2 {
		t.Fatalf("%d decisions, %d not kept; want 4, the 2 of replay.keep 0 not kept", decisions, notKept)
	}
	cmd := exec.Command(binary, "review", "prune", "--config", cfg)
	cmd.Env = append(os.Environ(), "MCPXFW_REPLAY_KEEP=1ns")
	if res := mustRun(t, cmd); res.code != 0 {
		t.Fatalf("review prune: exit %d, %s", res.code, res.stderr)
	} else if !strings.Contains(res.stdout, "policy inputs kept for replay longer than 1ns (replay.keep) are deleted") {
		t.Errorf("review prune said %q; want it to name the inputs it deletes", res.stdout)
	}
	if decisions, notKept := replayNotKept(t, cfg, "72h"); decisions != 4 || notKept != 4 {
		t.Errorf("after prune with replay.keep 1ns: %d decisions, %d not kept; want every input deleted", decisions, notKept)
	}
}

// TestPolicyReplayNamesWhatIsWrong: a --candidate that is no folder, or a
// --server the config does not name (which would replay nothing and pass
// the gate), is one line saying so, exit 2.
func TestPolicyReplayNamesWhatIsWrong(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, replayServer())
	appendConfig(t, cfg, "replay:\n  keep: 72h\n")
	if res := runCLI(t, "store", "migrate", "--config", cfg); res.code != 0 {
		t.Fatal(res.stderr)
	}
	dir := candidate(t, "stricter.rego")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing folder", []string{"--candidate", filepath.Join(dir, "nosuch")}, "no such folder"},
		{"a file", []string{"--candidate", cfg}, "is a file, not a policy folder"},
		{"unknown server", []string{"--candidate", dir, "--server", "nosuch"}, "--server nosuch: the config names no such server"},
	} {
		res := runCLI(t, append(append([]string{"policy", "replay"}, tc.args...), "--config", cfg)...)
		if res.code != exitUsage || !oneLine(res.stderr) || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", tc.name, res.code, res.stderr, tc.want)
		}
	}
}
