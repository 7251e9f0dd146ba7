package main

import (
	"strconv"

	"go.uber.org/zap"

	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox/sandboxtest"
)

// binary is the mcpx-fw built once for every test that runs the real
// command (serve, review, check, demo).
var binary string

// upstreamBinary is the test upstream (testdata/upstream, relay/peer's
// upstream with its hostile and load modes), built once beside binary as
// mcpx-fw-test-upstream: the tests' stdio servers run it, since mcpx-fw
// itself links no test peer.
var upstreamBinary string

// isolationUnavailable is why this system cannot isolate upstreams, if it
// cannot (TestMain probes once).
var isolationUnavailable error

func TestMain(m *testing.M) {
	sandbox.Main() // in-process start-up paths probe the launcher: this binary
	// A fuzz worker only runs a fuzz target, and those render in process:
	// it builds nothing (the coordinator has built the binary, if it needed it).
	if flag.Parse(); flag.Lookup("test.fuzzworker").Value.String() == "true" {
		os.Exit(m.Run())
	}
	if isolationUnavailable = sandbox.Probe(nil, nil); isolationUnavailable != nil && os.Getenv("MCPXFW_ISOLATION_DEFAULT") == "" {
		// Every test's serve would refuse its upstreams: run them without
		// isolation, and the tests of isolation skip.
		fmt.Fprintf(os.Stderr, "this system cannot isolate upstreams (%v): tests run them with isolation.default: none\n", isolationUnavailable)
		os.Setenv("MCPXFW_ISOLATION_DEFAULT", "none")
	}
	temp, err := sandboxtest.VisibleTemp("cmd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "mcpx-fw-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mcpx-fw")
	upstreamBinary = filepath.Join(dir, "mcpx-fw-test-upstream")
	for out, pkg := range map[string]string{binary: ".", upstreamBinary: "../../testdata/upstream"} {
		if err := goBuild(out, pkg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stopSharedCluster()
	os.RemoveAll(temp)
	os.Exit(code)
}

// goBuild builds pkg (a path from this folder) into out, with flags for
// go build before them.
func goBuild(out, pkg string, flags ...string) error {
	args := append(append([]string{"build"}, flags...), "-o", out, pkg)
	if b, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// repoPath is a path from the repository root.
func repoPath(t *testing.T, rel string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// cliResult is what one run of the binary did.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the built binary and returns its exit code and output; a
// binary that cannot start stops the test.
func runCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	res := runQuiet(t.Context(), args...)
	if res.code == -1 {
		t.Fatalf("run %v: %s", args, res.stderr)
	}
	return res
}

// runQuiet is runCLI for goroutines: it reports failure to start as a
// result (code -1) instead of stopping the test.
func runQuiet(ctx context.Context, args ...string) cliResult {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return runCmd(exec.CommandContext(ctx, binary, args...))
}

// runCmd runs cmd and reads what it printed and its exit code; a command
// that could not run gives code -1 and the error as its stderr.
func runCmd(cmd *exec.Cmd) cliResult {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		res.code, res.stderr = -1, err.Error()
	}
	return res
}

// mustRun is runCmd for a command that must start: one that cannot
// stops the test.
func mustRun(t *testing.T, cmd *exec.Cmd) cliResult {
	t.Helper()
	res := runCmd(cmd)
	if res.code == -1 {
		t.Fatalf("run %v: %s", cmd.Args, res.stderr)
	}
	return res
}

// openStore opens the review store that the config at cfg uses, as a
// second process would.
func openStore(t *testing.T, cfg string) *review.Store {
	t.Helper()
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := review.Open(c.StateDir, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// writeFile writes content under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testConfig writes a config for one upstream, with the state dir,
// decision log and service log in a fresh temporary folder. The policy
// deadline is wall time: on a machine whose cores are shared six times
// over, an evaluation that takes a tenth of a millisecond of CPU was seen
// to overrun 250ms and fail closed, as it should, while the test was about
// something else. So these tests allow 5s; the deadline itself is tested
// with policies made to overrun it (engine's failclosed tests).
func testConfig(t *testing.T, policyDir string, reviewTimeout time.Duration, servers string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`state_dir: %s
policy:
  dir: %s
  timeout: 5s
review:
  timeout: %s
sampling:
  host_timeout: 30s
servers:
%s
decision_log:
  sink: %s
log:
  file: %s
`, filepath.Join(dir, "state"), policyDir, reviewTimeout, servers,
		filepath.Join(dir, "decisions.jsonl"), filepath.Join(dir, "serve.log"))
	return writeFile(t, dir, "mcpx-fw.yaml", cfg)
}

// appendConfig adds a top-level section, such as "limits:\n  max_in_flight: 8\n",
// to the config at cfg (which testConfig writes without one).
func appendConfig(t *testing.T, cfg, section string) {
	t.Helper()
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(section); err != nil {
		t.Fatal(err)
	}
}

// unlimited lifts the limits on what upstreams may hold, for tests that
// hold more requests at once than the defaults allow.
const unlimited = `limits:
  max_in_flight: 100000
  max_pending_reviews: 100000
  max_held_bytes: 1073741824
  max_in_flight_per_host: 100000
  max_pending_reviews_per_host: 100000
  max_held_bytes_per_host: 1073741824
`

// peerServer is the servers: entry for the test upstream.
func peerServer(name string, maxTokens int) string {
	return fmt.Sprintf("  %s:\n    command: [%q]\n    label: Test peer %s\n    max_tokens: %d\n", name, upstreamBinary, name, maxTokens)
}

func oneLine(s string) bool {
	return strings.Count(strings.TrimSpace(s), "\n") == 0 && strings.TrimSpace(s) != ""
}

// ownerPID reads the pid at the start of a review owner ("pid:start:…").
func ownerPID(owner string) (int, error) {
	head, _, _ := strings.Cut(owner, ":")
	return strconv.Atoi(head)
}
