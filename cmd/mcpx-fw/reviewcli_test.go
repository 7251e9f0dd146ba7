package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// listLines reads review list --json: one JSON object per line, each
// decoded into a T; a line that is no object is an error.
func listLines[T any](out string) ([]T, error) {
	var items []T
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "{") {
			return nil, fmt.Errorf("not one JSON object per line: %q", line)
		}
		var it T
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// runBare runs the binary in dir with env added to the test's own and
// every MCPXFW_* variable of the test's dropped, as an operator's shell
// outside any config's folder would.
func runBare(t *testing.T, dir string, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPXFW_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return mustRun(t, cmd)
}

// stateWith makes a state dir holding one pending review of each kind,
// and returns it and the reviews.
func stateWith(t *testing.T, reasonCode string) (string, []review.Item) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	st, err := review.Open(dir, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var items []review.Item
	for _, kind := range []string{"sampling", "elicitation", "roots"} {
		it := rendertest.KindItem(t, kind, `{}`, "")
		if kind == "elicitation" {
			it.Request = json.RawMessage(rendertest.FormRequest)
		}
		if reasonCode != "" {
			it.Reasons = []review.Reason{{Code: reasonCode, Message: "m"}}
		}
		if it, err = st.Add(t.Context(), it, time.Hour); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	return dir, items
}

// TestReadingCommandsNeedOnlyTheStateDir: review list, show and watch and
// audit run from a folder with no config file and no policies, with
// MCPXFW_STATE_DIR alone: no policy is compiled to read the queue, and
// what only a config knows is said to be missing, on stderr, never an
// error.
func TestReadingCommandsNeedOnlyTheStateDir(t *testing.T) {
	state, items := stateWith(t, "")
	elsewhere := t.TempDir()
	env := []string{"MCPXFW_STATE_DIR=" + state}
	list := runBare(t, elsewhere, env, "review", "list")
	if list.code != 0 || !strings.Contains(list.stderr, noConfigNote) {
		t.Fatalf("review list: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	for _, it := range items {
		if !strings.Contains(list.stdout, it.ID) {
			t.Errorf("review list lacks %s:\n%s", it.ID, list.stdout)
		}
	}
	show := runBare(t, elsewhere, env, "review", "show", items[0].ID)
	if show.code != 0 || !strings.Contains(show.stdout, "mcpx-fw review reject "+items[0].ID) || strings.Contains(show.stdout, "review answer") {
		t.Errorf("review show: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	for _, args := range [][]string{{"review", "list", "--json"}, {"review", "watch", "--json", "--count", "3"}, {"review", "show", items[1].ID, "--json"}} {
		if res := runBare(t, elsewhere, env, args...); res.code != 0 || !strings.Contains(res.stdout, items[1].ID) {
			t.Errorf("%s: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}
	audit := runBare(t, elsewhere, env, "audit")
	if audit.code != 0 || strings.Count(audit.stdout, " opened ") != 3 || audit.stderr != "" {
		t.Errorf("audit: exit %d\n%s%s", audit.code, audit.stdout, audit.stderr)
	}
	if res := runBare(t, elsewhere, env, "audit", "--verify"); res.code != 0 {
		t.Errorf("audit --verify: exit %d %s", res.code, res.stderr)
	}
}

// TestListJSONIsJSONLines: review list --json prints one object per
// line, as watch --json and audit --json do.
func TestListJSONIsJSONLines(t *testing.T) {
	state, items := stateWith(t, "")
	res := runBare(t, t.TempDir(), []string{"MCPXFW_STATE_DIR=" + state}, "review", "list", "--json")
	lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	if res.code != 0 || len(lines) != len(items) {
		t.Fatalf("list --json: exit %d, %d lines, want %d\n%s%s", res.code, len(lines), len(items), res.stdout, res.stderr)
	}
	for _, line := range lines {
		var it render.ListItemJSON
		if err := json.Unmarshal([]byte(line), &it); err != nil || !slices.ContainsFunc(items, func(i review.Item) bool { return i.ID == it.ID }) {
			t.Errorf("list --json line %q: %v", line, err)
		}
	}
}

// TestTablesAreCutOnlyForATerminal: piped, review list and audit print
// each row whole (no terminal wraps it); --width cuts them, audit's too.
func TestTablesAreCutOnlyForATerminal(t *testing.T) {
	long := "a-reason-code-" + strings.Repeat("x", 120)
	state, _ := stateWith(t, long)
	env := []string{"MCPXFW_STATE_DIR=" + state, "MCPXFW_POLICY_DIR=" + repoPath(t, "policies")}
	dir := t.TempDir()
	cut := regexp.MustCompile(`(?m)^ *` + render.ContMark)
	for _, args := range [][]string{{"review", "list"}, {"audit"}} {
		whole := runBare(t, dir, env, args...)
		if whole.code != 0 || cut.MatchString(whole.stdout) {
			t.Errorf("%s piped: exit %d, rows cut:\n%s%s", args, whole.code, whole.stdout, whole.stderr)
		}
		narrow := runBare(t, dir, env, append(args, "--width", "60")...)
		if narrow.code != 0 || !cut.MatchString(narrow.stdout) {
			t.Errorf("%s --width 60: exit %d, rows not cut:\n%s%s", args, narrow.code, narrow.stdout, narrow.stderr)
		}
		for row := range strings.Lines(narrow.stdout) {
			if n := rendertest.TermColumns(strings.TrimSuffix(row, "\n"), false); n > 60 {
				t.Errorf("%s --width 60: a row of %d columns: %q", args, n, row)
			}
		}
	}
	if res := runBare(t, dir, env, "review", "list"); !strings.Contains(res.stdout, long) {
		t.Errorf("review list piped does not hold the reason code whole:\n%s", res.stdout)
	}
}

// TestRejectSaysWhatTheUpstreamGets: reject names what a refusal by a
// person is on the wire for the review's kind and era.
func TestRejectSaysWhatTheUpstreamGets(t *testing.T) {
	url := `{"mode":"url","message":"m","url":"https://example.com/a","elicitationId":"e1"}`
	modern := rendertest.KindItem(t, "elicitation", rendertest.FormRequest, "")
	modern.Era = "2026-07-28"
	cases := []struct {
		it   review.Item
		want string
	}{
		{rendertest.KindItem(t, "sampling", `{}`, ""), "the upstream gets -1 (user rejected)"},
		{rendertest.KindItem(t, "roots", `{}`, ""), "the upstream gets -1 (user rejected)"},
		{rendertest.KindItem(t, "elicitation", rendertest.FormRequest, ""), `the upstream gets {"action": "decline"}`},
		{rendertest.KindItem(t, "elicitation", rendertest.FormRequest, `{"action":"accept","content":{}}`), `the upstream gets {"action": "decline"}`},
		{rendertest.KindItem(t, "elicitation", url, ""), `the upstream gets {"action": "decline"} (a URL from a -32042 error: the host's call gets -1)`},
		{modern, "the host's call fails with -1 (user rejected) and the upstream is not retried"},
	}
	for _, c := range cases {
		if got := render.RejectEffect(c.it); got != c.want {
			t.Errorf("%s %s era %s: %q, want %q", render.ItemKind(c.it), c.it.Stage, c.it.Era, got, c.want)
		}
	}
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	it, err := openStore(t, cfg).Add(t.Context(), rendertest.KindItem(t, "elicitation", rendertest.FormRequest, ""), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "review", "reject", it.ID, "--config", cfg)
	if res.code != 0 || !strings.HasSuffix(res.stdout, `; the upstream gets {"action": "decline"}`+"\n") {
		t.Errorf("review reject of a form: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestConfigFromTheEnvironment: MCPXFW_CONFIG names the config file when
// --config does not, for every command; --config still wins.
func TestConfigFromTheEnvironment(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	it, err := openStore(t, cfg).Add(t.Context(), rendertest.KindItem(t, "sampling", `{}`, ""), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPXFW_CONFIG=" + cfg, "XDG_STATE_HOME=" + t.TempDir()}
	list := runBare(t, t.TempDir(), env, "review", "list")
	if list.code != 0 || !strings.Contains(list.stdout, it.ID) || list.stderr != "" {
		t.Errorf("review list with MCPXFW_CONFIG: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	if res := runBare(t, t.TempDir(), env, "review", "reject", it.ID); res.code != 0 {
		t.Errorf("review reject with MCPXFW_CONFIG: exit %d %s", res.code, res.stderr)
	}
	other := writeFile(t, t.TempDir(), "other.yaml", "state_dir: "+filepath.Join(t.TempDir(), "state")+"\npolicy:\n  dir: "+repoPath(t, "policies")+"\n")
	openStore(t, other)
	if res := runBare(t, t.TempDir(), env, "review", "list", "--config", other); res.code != 0 || strings.Contains(res.stdout, it.ID) {
		t.Errorf("--config does not win over MCPXFW_CONFIG: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
