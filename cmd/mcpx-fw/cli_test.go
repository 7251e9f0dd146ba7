package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBadInputIsOneClearLine: every way of calling mcpx-fw wrongly ends
// with one line on stderr that names the problem, and a non-zero exit.
func TestBadInputIsOneClearLine(t *testing.T) {
	good := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	openStore(t, good) // the store serve would have made
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.yaml", "policy:\n  timeout: -1s\n")
	typo := writeFile(t, dir, "typo.yaml", "polcy:\n  dir: x\n")
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantText string
	}{
		{"invalid config names the line and the key", []string{"check", "--config", bad}, 1,
			"mcpx-fw: " + bad + ":2: policy.timeout: must be a positive duration such as 250ms or 10m\n"},
		{"unknown key is named with the nearest known one", []string{"check", "--config", typo}, 1,
			"mcpx-fw: " + typo + ":1: unknown key polcy (did you mean policy?)\n"},
		{"missing policies: serve refuses to start", []string{"serve", "--config", writeFile(t, dir, "nopol.yaml", "policy:\n  dir: "+filepath.Join(dir, "none")+"\nstate_dir: "+filepath.Join(dir, "s1")+"\n")}, 1, "policy.dir"},
		{"uncompilable policies: serve refuses to start", []string{"serve", "--config", brokenPolicyConfig(t, dir)}, 1, "main.rego"},
		{"unknown review id", []string{"review", "show", "rv-0000000000000000", "--config", good}, 3, "no review rv-0000000000000000"},
		{"missing argument is a usage error", []string{"review", "show", "--config", good}, 2, "Try:"},
		{"unknown flag is a usage error", []string{"review", "list", "--bogus", "--config", good}, 2, "bogus"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, tc.args...)
			if res.code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", res.code, tc.wantCode, res.stderr)
			}
			if !strings.Contains(res.stderr, tc.wantText) {
				t.Errorf("stderr %q does not mention %q", res.stderr, tc.wantText)
			}
			if !strings.HasPrefix(res.stderr, "mcpx-fw: ") {
				t.Errorf("stderr %q does not start with the one error line", res.stderr)
			}
		})
	}
}

func brokenPolicyConfig(t *testing.T, dir string) string {
	pol := filepath.Join(dir, "broken")
	writeFile(t, pol, "mcpxfw/main.rego", "package mcpxfw\n\ndecision := {\n")
	return writeFile(t, dir, "broken.yaml", "policy:\n  dir: "+pol+"\nstate_dir: "+filepath.Join(dir, "s2")+"\n")
}

// TestConfigFromEnv: MCPXFW_CONFIG names the config file when --config is
// not given, and --config wins over it; --help says so.
func TestConfigFromEnv(t *testing.T) {
	good := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	dir := t.TempDir()
	typo := writeFile(t, dir, "typo.yaml", "servres: {}\n")
	missing := filepath.Join(dir, "missing.yaml")
	cases := []struct {
		name, env string
		args      []string
		wantCode  int
		wantOut   string // a prefix of stdout, or of stderr when the exit is not 0
	}{
		{"MCPXFW_CONFIG is read", good, []string{"check"}, 0, "ok: 1 server(s)"},
		{"MCPXFW_CONFIG's problems are named", typo, []string{"check"}, 1,
			"mcpx-fw: " + typo + ":1: unknown key servres (did you mean servers?)\n"},
		{"--config wins over MCPXFW_CONFIG", typo, []string{"check", "--config", good}, 0, "ok: 1 server(s)"},
		{"a missing MCPXFW_CONFIG is an error", missing, []string{"check"}, 1, "mcpx-fw: MCPXFW_CONFIG=" + missing + ": no such file\n"},
		{"--help names MCPXFW_CONFIG", "", []string{"--help"}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), binary, tc.args...)
			cmd.Dir, cmd.Env = t.TempDir(), append(os.Environ(), "MCPXFW_CONFIG="+tc.env)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			out := stdout.String()
			if tc.wantCode != 0 {
				out = stderr.String()
			}
			if code := cmd.ProcessState.ExitCode(); code != tc.wantCode || !strings.HasPrefix(out, tc.wantOut) {
				t.Fatalf("exit %d (%v), want %d; output %q, want it to start with %q; stderr %q", code, err, tc.wantCode, out, tc.wantOut, stderr.String())
			}
			if tc.args[0] == "--help" && !strings.Contains(out, "config file (default $MCPXFW_CONFIG, else mcpx-fw.yaml") {
				t.Errorf("--help does not name MCPXFW_CONFIG:\n%s", out)
			}
		})
	}
}

func TestCheckAcceptsAGoodConfig(t *testing.T) {
	res := runCLI(t, "check", "--config", testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0)))
	if res.code != 0 || !strings.HasPrefix(res.stdout, "ok: 1 server(s)") {
		t.Fatalf("check: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}

// TestApprovingABlockerIsRefused: a denied request's decision id cannot be
// approved by anyone.
func TestApprovingABlockerIsRefused(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	got, err := host.Sample(t.Context(), json.RawMessage(overCapRequest))
	if err != nil || got.Error == nil {
		t.Fatalf("want a deny, got %+v, %v", got, err)
	}
	var data struct {
		DecisionID string `json:"decision_id"`
	}
	_ = json.Unmarshal(got.Error.Data, &data)
	res := runCLI(t, "review", "approve", data.DecisionID, "--config", cfg)
	if res.code != 1 || !strings.Contains(res.stderr, "blocker") || !oneLine(res.stderr) {
		t.Fatalf("approve %s: exit %d, stderr %q; want exit 1 naming a blocker", data.DecisionID, res.code, res.stderr)
	}
}

// TestPendingReviewSurvivesRestart: a review whose serve process died is
// still listed, marked abandoned, can never be approved, and a new serve
// keeps working.
func TestPendingReviewSurvivesRestart(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	go func() { _, _ = host.Sample(t.Context(), json.RawMessage(secretRequest)) }()
	id := waitPending(t, cfg)
	killOwner(t, cfg, id)
	_ = host.Close() // reaps the killed process, as init would

	res := runCLI(t, "review", "list", "--all", "--json", "--config", cfg)
	items, err := listLines[struct{ ID, State string }](res.stdout)
	if err != nil || len(items) != 1 || items[0].ID != id || items[0].State != "abandoned" {
		t.Fatalf("after the crash, list = %s (%v); want %s abandoned", res.stdout, err, id)
	}
	if res := runCLI(t, "review", "approve", id, "--config", cfg); res.code != 1 {
		t.Fatalf("approving an abandoned review: exit %d, want 1; %s", res.code, res.stderr)
	}
	again := startFirewall(t, cfg, answerWith(hostAnswer))
	got, err := again.Sample(t.Context(), json.RawMessage(plainRequest))
	if err != nil || got.Error != nil {
		t.Fatalf("restarted serve: %+v, %v", got, err)
	}
	if res := runCLI(t, "review", "show", id, "--json", "--config", cfg); !strings.Contains(res.stdout, `"state": "abandoned"`) {
		t.Fatalf("after restart, show = %s", res.stdout)
	}
}

// killOwner kills the serve process waiting on review id, as a crash would.
func killOwner(t *testing.T, cfg, id string) {
	t.Helper()
	st := openStore(t, cfg)
	it, err := st.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := ownerPID(it.Owner)
	if err != nil || pid <= 0 {
		t.Fatalf("owner %q: %v", it.Owner, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// TestHostLeavingAbandonsPendingReviews: when the host disconnects while a
// review waits, serve stops waiting at once, the review is abandoned (never
// delivered later) and serve exits without sitting out review.timeout.
func TestHostLeavingAbandonsPendingReviews(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), 10*time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	go func() { _, _ = host.Sample(t.Context(), json.RawMessage(secretRequest)) }()
	id := waitPending(t, cfg)
	start := time.Now()
	_ = host.Disconnect()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("serve took %s to exit after the host left", took)
	}
	res := runCLI(t, "review", "show", id, "--json", "--config", cfg)
	if !strings.Contains(res.stdout, `"state": "abandoned"`) {
		t.Fatalf("after the host left, show = %s", res.stdout)
	}
}

// TestStoreMigrate: store migrate opens (creating) the configured store,
// brings its schema up to date and names it and its version; a second run
// finds nothing to do and says the same.
func TestStoreMigrate(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	for range 2 {
		res := runCLI(t, "store", "migrate", "--config", cfg)
		v, err := openStore(t, cfg).SchemaVersion(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("reviews.db, schema version %d\n", v)
		if res.code != 0 || !strings.HasPrefix(res.stdout, "store: sqlite ") || !strings.HasSuffix(res.stdout, want) {
			t.Fatalf("store migrate: exit %d, stdout %q, stderr %q; want the SQLite file ending %q", res.code, res.stdout, res.stderr, want)
		}
	}
}

// TestCheckSaysWhyTheStoreIsUnreachable: check against a PostgreSQL store
// it cannot reach fails and says why, in an operator's words, without the
// password. (Authentication and a schema its user may not migrate need a
// server: engine/review's TestOpenNamesWhatIsWrong covers them.)
func TestCheckSaysWhyTheStoreIsUnreachable(t *testing.T) {
	const password = "pw-never-shown"
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	cases := []struct{ name, url, want string }{
		{"connection refused", "postgres://fw:" + password + "@127.0.0.1:1/fw?sslmode=disable", "connection refused: nothing listens at that host and port"},
		{"no server socket", "postgres://fw:" + password + "@/fw?host=" + url.QueryEscape(t.TempDir()), "no server socket in that directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MCPXFW_STORE_URL", tc.url)
			res := runCLI(t, "check", "--config", cfg)
			if res.code == 0 || !strings.Contains(res.stderr, tc.want) || !strings.Contains(res.stderr, "review store unavailable") {
				t.Errorf("check: exit %d, stderr %q; want a failure saying %q", res.code, res.stderr, tc.want)
			}
			if strings.Contains(res.stdout+res.stderr, password) {
				t.Errorf("check shows the password: %s%s", res.stdout, res.stderr)
			}
		})
	}
}
