package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// npmSetup is the outcome of the one run of .ci/node-setup per test binary.
var npmSetup struct {
	once sync.Once
	node string
	out  string
	err  error
}

// nodeSetup installs the pinned npm peers in testdata/npm (Node 22, the
// conformance runners, the TypeScript SDKs) by running .ci/node-setup once
// per test binary, and returns the path of the Node 22 binary. A failed
// setup fails the test with the script's output: the npm peers are part of
// the suite, never skipped.
func nodeSetup(t *testing.T) (node string) {
	t.Helper()
	script := repoPath(t, filepath.Join(".ci", "node-setup"))
	npmSetup.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, script)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		npmSetup.err = cmd.Run()
		npmSetup.out = stdout.String() + stderr.String()
		npmSetup.node = strings.TrimSpace(stdout.String())
		if npmSetup.err == nil && !filepath.IsAbs(npmSetup.node) {
			npmSetup.err = fmt.Errorf("printed %q, want the absolute path of node", npmSetup.node)
		}
	})
	if npmSetup.err != nil {
		t.Fatalf(".ci/node-setup: %v\n%s", npmSetup.err, npmSetup.out)
	}
	return npmSetup.node
}

// conformanceRunners maps each runner version the tests use to its
// package folder under testdata/npm/node_modules; 0.2.0-alpha.12 is
// installed under the npm alias conformance-next.
var conformanceRunners = map[string]string{
	"0.1.16":         "@modelcontextprotocol/conformance",
	"0.2.0-alpha.12": "conformance-next",
}

// conformanceCheck is one entry of the runner's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string `json:"errorMessage"`
}

// ansiEscape matches the colour codes the runner prints unconditionally.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// runConformance runs one server scenario of the conformance runner at
// version against url and reports whether it passed, with the runner's
// output (colours removed) followed by a summary of its checks.json.
//
// Passed means stricter than the runner's exit code: the run exited 0 and
// its checks.json holds at least one SUCCESS and no FAILURE or WARNING. A
// WARNING is how the runner marks a check it could not exercise (a server
// that fell back to a 2025 answer passes some 2026 scenarios with only
// warnings), so it must not count as a pass for a baseline.
func runConformance(t *testing.T, node, version, url, scenario string) (passed bool, output string) {
	t.Helper()
	pkg, ok := conformanceRunners[version]
	if !ok {
		t.Fatalf("no conformance runner %q installed; have %v", version, conformanceRunners)
	}
	dir := repoPath(t, filepath.Join("testdata", "npm", "node_modules", pkg))
	checkRunnerVersion(t, dir, version)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	outDir := t.TempDir()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "dist", "index.js"),
		"server", "--url", url, "--scenario", scenario, "--output-dir", outDir)
	cmd.Dir = outDir
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()

	output = ansiEscape.ReplaceAllString(out.String(), "")
	checks, err := readConformanceChecks(outDir)
	if err != nil {
		return false, fmt.Sprintf("%s\nchecks.json: %v\nrunner: %v", output, err, runErr)
	}
	counts := map[string]int{}
	var summary strings.Builder
	for _, c := range checks {
		counts[c.Status]++
		if c.Status != "SUCCESS" {
			fmt.Fprintf(&summary, "  %s %s: %s\n", c.Status, c.ID, c.ErrorMessage)
		}
	}
	passed = runErr == nil && counts["SUCCESS"] > 0 && counts["FAILURE"] == 0 && counts["WARNING"] == 0
	output = fmt.Sprintf("%s\nchecks.json: %d SUCCESS, %d FAILURE, %d WARNING (runner: %v)\n%s",
		output, counts["SUCCESS"], counts["FAILURE"], counts["WARNING"], runErr, summary.String())
	return passed, output
}

// checkRunnerVersion fails the test when the installed runner is not the
// version asked for (a lock file edited without re-running node-setup).
func checkRunnerVersion(t *testing.T, dir, version string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatalf("conformance runner %s: %v", version, err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil || pkg.Version != version {
		t.Fatalf("conformance runner in %s is version %q (%v), want %s", dir, pkg.Version, err, version)
	}
}

// readConformanceChecks reads the checks the runner saved under outDir
// (one folder per scenario run, server-<scenario>-<time>/checks.json).
func readConformanceChecks(outDir string) ([]conformanceCheck, error) {
	files, err := filepath.Glob(filepath.Join(outDir, "*", "checks.json"))
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("found %d checks.json files under %s, want 1", len(files), outDir)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(raw, &checks); err != nil {
		return nil, fmt.Errorf("%s: %w", files[0], err)
	}
	return checks, nil
}

// startEverythingHTTP serves the Go SDK everything-server over streamable
// HTTP on a free loopback port, stateless or stateful (the legacy era
// needs stateful for server-initiated sampling; 2026-07-28 needs
// stateless), and returns its URL. The server answers on every path; the
// URL uses /mcp. It is stopped when the test ends.
func startEverythingHTTP(t *testing.T, stateless bool) string {
	t.Helper()
	bin := everythingServer(t)
	var lastErr error
	for range 3 { // the free port can be taken between probe and bind
		addr := freeLoopbackAddr(t)
		if lastErr = serveEverything(t, bin, addr, stateless); lastErr == nil {
			return "http://" + addr + "/mcp"
		}
	}
	t.Fatalf("everything-server -http: %v", lastErr)
	return ""
}

// serveEverything starts one everything-server on addr and waits until it
// accepts connections or exits.
func serveEverything(t *testing.T, bin, addr string, stateless bool) error {
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-http", addr, fmt.Sprintf("-stateless=%t", stateless))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			select {
			case err := <-exited: // someone else holds addr
				return fmt.Errorf("exited (%v) while %s answered: %s", err, addr, logs.String())
			default:
			}
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited (%v) before listening on %s: %s", err, addr, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return errors.New("not listening on " + addr + " after 15s: " + logs.String())
		}
	}
}

// freeLoopbackAddr returns a loopback address with a port that was free a
// moment ago, for peers that cannot report the port they bound.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
