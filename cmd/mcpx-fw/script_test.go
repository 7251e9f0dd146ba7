package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/zap"
	_ "modernc.org/sqlite" // the "sqlite" driver, for tampering with the store

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestScripts runs the operator's CLI sessions in testdata/scripts: each
// script is what a person types in a shell, against the built binary, while
// a real `mcpx-fw serve` runs under a test host (see the firewall, sample,
// outcome and pending commands below). Each script carries its own
// mcpx-fw.yaml; paths in it resolve against the script's work dir.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 repoPath(t, "testdata/scripts"),
		Setup:               scriptSetup(t),
		RequireExplicitExec: true,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"firewall": cmdFirewall,
			"sample":   cmdSample,
			"outcome":  cmdOutcome,
			"pending":  cmdPending,
			"sqlite":   cmdSQLite,
			"golden":   cmdGolden,
			"exits":    cmdExits,
		},
	})
}

// scriptSetup puts the built binaries on PATH (`mcpx-fw`, and the test
// upstream as `mcpx-fw-test-upstream`) and the shipped policies in
// MCPXFW_POLICY_DIR.
func scriptSetup(t *testing.T) func(*testscript.Env) error {
	policies := repoPath(t, "policies")
	return func(e *testscript.Env) error {
		e.Setenv("PATH", filepath.Dir(binary)+string(os.PathListSeparator)+e.Getenv("PATH"))
		e.Setenv("MCPXFW_POLICY_DIR", policies)
		e.Setenv("EDITOR", "false") // a script that forgets to set one fails instead of waiting for vi
		e.Setenv("VISUAL", "")
		e.Values[scriptKey{}] = &scriptState{samples: map[string]chan sampleResult{}, seen: map[string]bool{}}
		return nil
	}
}

type scriptKey struct{}

// scriptState is what one script's commands share: its test host, the
// sampling requests in flight, and the reviews already handed out.
type scriptState struct {
	mu      sync.Mutex
	host    *peer.Host
	samples map[string]chan sampleResult
	seen    map[string]bool
}

type sampleResult struct {
	out *peer.SampleOutcome
	err error
}

func stateOf(ts *testscript.TestScript) *scriptState {
	return ts.Value(scriptKey{}).(*scriptState)
}

// cmdFirewall starts `mcpx-fw serve --config $WORK/mcpx-fw.yaml` under a
// test host. The host's model answers "answer to: <the last prompt text>",
// so an edited prompt shows in the completion; -answer TEXT makes it say
// TEXT instead; -no-sampling makes a host that cannot sample.
//
//	firewall [-no-sampling] [-answer TEXT]
func cmdFirewall(ts *testscript.TestScript, neg bool, args []string) {
	opts := peer.HostOptions{
		Command: []string{binary, "serve", "--config", ts.MkAbs("mcpx-fw.yaml")},
		Env:     scriptEnv(ts), Answer: echoAnswer, Tools: true,
	}
	for len(args) > 0 {
		switch args[0] {
		case "-no-sampling":
			opts.Answer, args = nil, args[1:]
		case "-answer":
			opts.Answer, args = fixedAnswer(args[1]), args[2:]
		default:
			ts.Fatalf("usage: firewall [-no-sampling] [-answer TEXT]")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := peer.StartHost(ctx, opts)
	ts.Check(err)
	ts.Defer(func() { _ = h.Close() })
	stateOf(ts).host = h
}

// scriptEnv is the environment serve runs with: the test's, plus the
// script's PATH and MCPXFW_* variables.
func scriptEnv(ts *testscript.TestScript) []string {
	env := os.Environ()
	for _, k := range []string{"PATH", "MCPXFW_POLICY_DIR", "MCPXFW_REVIEW_RETAIN", "EDITOR", "VISUAL"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

func echoAnswer(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(params, &p)
	var last string
	for _, m := range p.Messages {
		for _, b := range render.ContentBlocks(decodeAny(m.Content)) {
			if s, ok := b["text"].(string); ok {
				last = s
			}
		}
	}
	return fixedAnswer("answer to: "+last)(context.Background(), params)
}

func fixedAnswer(text string) peer.Answer {
	b, _ := json.Marshal(map[string]any{"role": "assistant", "model": "test-model", "stopReason": "endTurn",
		"content": map[string]any{"type": "text", "text": text}})
	return func(context.Context, json.RawMessage) (json.RawMessage, error) { return b, nil }
}

func decodeAny(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// cmdSample has the upstream send the sampling params in FILE, in the
// background; outcome NAME reports what the upstream got back.
//
//	sample NAME FILE
func cmdSample(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sample NAME FILE")
	}
	st := stateOf(ts)
	if st.host == nil {
		ts.Fatalf("sample: no firewall started")
	}
	params := json.RawMessage(ts.ReadFile(args[1]))
	done := make(chan sampleResult, 1)
	st.mu.Lock()
	st.samples[args[0]] = done
	st.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := st.host.Sample(ctx, params)
		done <- sampleResult{out, err}
	}()
}

// cmdOutcome waits for sample NAME and prints what the upstream received:
// "completion model=M text=T" or "error CODE MESSAGE".
//
//	outcome NAME
func cmdOutcome(ts *testscript.TestScript, neg bool, args []string) {
	st := stateOf(ts)
	st.mu.Lock()
	done, ok := st.samples[args[0]]
	st.mu.Unlock()
	if !ok {
		ts.Fatalf("outcome: no sample %s", args[0])
	}
	var r sampleResult
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		ts.Fatalf("outcome %s: no answer within a minute", args[0])
	}
	ts.Check(r.err)
	if r.out.Error != nil {
		fmt.Fprintf(ts.Stdout(), "error %d %s\n", r.out.Error.Code, r.out.Error.Message)
		return
	}
	var c struct {
		Model   string         `json:"model"`
		Content map[string]any `json:"content"`
	}
	ts.Check(json.Unmarshal(r.out.Completion, &c))
	fmt.Fprintf(ts.Stdout(), "completion model=%s text=%v\n", c.Model, c.Content["text"])
}

// cmdPending waits until a pending review this script has not seen yet
// exists (at the given stage, if any) and stores its id in $VAR.
//
//	pending [-stage request|result] VAR
func cmdPending(ts *testscript.TestScript, neg bool, args []string) {
	stage := ""
	if len(args) == 3 && args[0] == "-stage" {
		stage, args = args[1], args[2:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: pending [-stage STAGE] VAR")
	}
	st, store := stateOf(ts), openScriptStore(ts)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		items, err := store.List(context.Background(), review.Filter{})
		ts.Check(err)
		for _, it := range items {
			if !st.seen[it.ID] && (stage == "" || it.Stage == stage) {
				st.seen[it.ID] = true
				ts.Setenv(args[0], it.ID)
				return
			}
		}
	}
	ts.Fatalf("pending: no new review within a minute")
}

// openScriptStore opens the queue in $WORK/state, as the CLI would.
func openScriptStore(ts *testscript.TestScript) *review.Store {
	s, err := review.Open(ts.MkAbs("state"), zap.NewNop())
	ts.Check(err)
	ts.Defer(func() { s.Close() })
	return s
}

// cmdExits runs the binary and checks its exit code, the CLI's contract:
// 0 done, 1 refused or failed, 2 usage, 3 not found. Its output is
// checked with stdout and stderr as exec's would be.
//
//	exits CODE mcpx-fw ARGS...
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || args[1] != "mcpx-fw" {
		ts.Fatalf("usage: exits CODE mcpx-fw ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	cmd := exec.Command(binary, args[2:]...)
	cmd.Dir, cmd.Env = ts.MkAbs("."), scriptEnv(ts)
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	err = cmd.Run()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else {
		ts.Check(err)
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// cmdSQLite runs SQL on the state's store file directly, as someone with
// write access to the file could: how the scripts tamper with it.
//
//	sqlite SQL
func cmdSQLite(ts *testscript.TestScript, neg bool, args []string) {
	db, err := sqlOpen(ts.MkAbs(filepath.Join("state", review.FileName)))
	ts.Check(err)
	defer db.Close()
	_, err = db.Exec(strings.Join(args, " "))
	if neg != (err != nil) {
		ts.Fatalf("sqlite: %v", err)
	}
}

// sqlOpen opens a store file with nothing of the store's own setup.
func sqlOpen(path string) (*sql.DB, error) {
	return sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: "_pragma=busy_timeout(5000)"}).String())
}
