//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestUpstreamCannotDecideItsOwnReview: a hostile stdio upstream, under
// serve with the default config (isolation on), holds a pending review of
// its own request and tries, from inside its process, every route to
// decide it or to read what is serve's (peer.Target and attack_linux.go
// list them: the review CLI by PATH, by absolute path, by its own binary,
// with --config and with MCPXFW_STATE_DIR; the queue's SQLite file; the
// seal key; the config; the policies; /proc of serve; signals; ptrace;
// renaming the folder above the state dir; the session runtime dir). None
// opens. The review is still pending until the operator's CLI approves it,
// the audit log has that one decision and no other, neither another
// server's header credential nor any of serve's own variables is in what
// the upstream saw (its TMPDIR is its own /tmp, not serve's), and serve
// still serves.
func TestUpstreamCannotDecideItsOwnReview(t *testing.T) {
	if isolationUnavailable != nil {
		t.Skipf("this system cannot isolate: %v", isolationUnavailable)
	}
	const webToken = "web-credential-5f1d0c"
	const canary = "serve-only-canary-93ab7e"
	url := startHTTPUpstream(t, "-require-header", "X-Peer-Token: "+webToken)
	peerLog := filepath.Join(t.TempDir(), "peer.log")
	runtimeDir := t.TempDir()
	if err := os.Chmod(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, runtimeDir, "bus", "a session bus")
	servers := fmt.Sprintf("  evil:\n    command: [%q]\n    max_tokens: 1000\n    env: {%s: \"1\", MCPXFW_PEER_LOG: %q}\n"+
		"  web:\n    url: %s\n    headers: {X-Peer-Token: \"${MCPXFW_TEST_WEB_TOKEN}\"}\n    max_tokens: 1000\n",
		upstreamBinary, peer.HostileEnv, peerLog, url)
	cfg := testConfig(t, repoPath(t, "policies"), 10*time.Minute, servers)
	state := filepath.Join(filepath.Dir(cfg), "state")
	env := append(os.Environ(), "MCPXFW_ISOLATION_DEFAULT=namespaces", "MCPXFW_TEST_WEB_TOKEN="+webToken, "MCPXFW_TEST_CANARY="+canary, "XDG_RUNTIME_DIR="+runtimeDir,
		"PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, Env: env,
		Answer: answerWith(hostAnswer), Tools: true})
	if err != nil {
		t.Fatalf("start serve: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	call := sampleAsync(ctx, h, "evil", secretRequest)
	id := waitPending(t, cfg)

	target := peer.Target{ReviewID: id, Config: cfg, StateDir: state, PolicyDir: repoPath(t, "policies"), Binary: binary,
		ServePID: h.PID(), RuntimeDir: runtimeDir}
	res, err := h.CallTool(ctx, "evil__attack", target)
	if err != nil {
		last, _ := os.ReadFile(peerLog)
		t.Fatalf("attack: %v (serve gone?); the upstream's report before its SIGTERM: %s", err, last)
	}
	var report peer.AttackReport
	if err := json.Unmarshal([]byte(res.Text), &report); err != nil || len(report.Routes) < 20 {
		t.Fatalf("attack report %q: %v", res.Text, err)
	}
	for _, r := range report.Routes {
		if r.Opened {
			t.Errorf("route open: %s (%s)", r.Name, r.Detail)
		} else {
			t.Logf("closed: %s (%s)", r.Name, r.Detail)
		}
	}
	for _, secret := range []string{webToken, canary, "MCPXFW_TEST_"} {
		if strings.Contains(res.Text, secret) {
			t.Errorf("the upstream saw %q (its environment: %q)", secret, report.Env)
		}
	}
	if !slices.Contains(report.Env, "TMPDIR=/tmp") {
		t.Errorf("the upstream's environment %q; want TMPDIR=/tmp, its own, not serve's %s", report.Env, os.TempDir())
	}
	if it := reviewItem(t, cfg, id); it.State != review.StatePending {
		t.Fatalf("review %s is %s after the attack; want pending", id, it.State)
	}

	for _, tool := range []string{"evil__echo", "web__echo"} {
		if res, err := h.CallTool(ctx, tool, map[string]any{"text": "still serving"}); err != nil || res.Text != "still serving" {
			t.Errorf("%s after the attack: %+v, %v", tool, res, err)
		}
	}
	approving := time.Now()
	if res := runCLI(t, "review", "approve", id, "--config", cfg); res.code != 0 {
		t.Fatalf("the operator's approve: exit %d: %s", res.code, res.stderr)
	}
	checkOutcome(t, receive(t, call, "the approved sample"), 0, "")
	checkDecidedOnlyAfter(t, cfg, id, approving)
}

// reviewItem reads one review from the queue, as another process.
func reviewItem(t *testing.T, cfg, id string) review.Item {
	t.Helper()
	it, err := openStore(t, cfg).Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// checkDecidedOnlyAfter checks the audit log: of the review's entries,
// those made by a person are exactly one, an approval made after from (by
// the test's operator: the upstream runs as the same OS user, so only the
// time tells them apart).
func checkDecidedOnlyAfter(t *testing.T, cfg, id string, from time.Time) {
	t.Helper()
	res := runCLI(t, "audit", "--json", "--config", cfg)
	if res.code != 0 {
		t.Fatalf("audit: exit %d: %s", res.code, res.stderr)
	}
	var byPeople []review.AuditEntry
	sc := bufio.NewScanner(strings.NewReader(res.stdout))
	for sc.Scan() {
		var e review.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if e.ItemID == id && e.Operator != "" {
			byPeople = append(byPeople, e)
		}
	}
	if len(byPeople) != 1 || byPeople[0].At.Before(from) || byPeople[0].Event != review.EventApproved {
		t.Errorf("the audit log's decisions on %s: %+v; want one approval, made after %v", id, byPeople, from)
	}
}

// TestIsolationNoneIsLogged: an upstream configured out of isolation is
// named as not isolated, with the key that said so, by check and in serve's
// log; an isolated one is named as isolated.
func TestIsolationNoneIsLogged(t *testing.T) {
	if isolationUnavailable != nil {
		t.Skipf("this system cannot isolate: %v", isolationUnavailable)
	}
	servers := peerServer("boxed", 0) + peerServer("open", 0) + "    isolation: none\n"
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, servers)
	res := runCLI(t, "check", "--config", cfg)
	for _, want := range []string{"server boxed: isolated (user, mount, PID and IPC namespaces, its own /tmp)\n",
		"server open: not isolated: servers.open.isolation is none\n"} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("check: exit %d, stdout %q; want %q", res.code, res.stdout, want)
		}
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "serve.log"))
	for _, want := range []string{`"level":"warn","ts":`, `"msg":"upstream isolation","server":"open","isolated":false,"why":"servers.open.isolation is none"`,
		`"msg":"upstream isolation","server":"boxed","isolated":true`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("serve's log has no %s:\n%s", want, log)
		}
	}
}

// TestCheckReportsMissingEnvVariable: a ${VAR} in a server's env that is
// not set stops check and serve, naming the key and the variable, as for
// a header.
func TestCheckReportsMissingEnvVariable(t *testing.T) {
	servers := peerServer("peer", 0) + "    env: {API_TOKEN: \"Bearer ${MCPXFW_TEST_UNSET_TOKEN}\"}\n"
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, servers)
	for _, sub := range []string{"check", "serve"} {
		res := runCLI(t, sub, "--config", cfg)
		if res.code != exitFailure || !strings.Contains(res.stderr, "servers.peer.env.API_TOKEN: ${MCPXFW_TEST_UNSET_TOKEN} is not set") || !oneLine(res.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and one line naming the key and the variable", sub, res.code, res.stderr)
		}
	}
}

// TestCheckReportsMissingServiceVariable: a ${VAR} that is not set in the
// headers or token of a service serve calls (tracing.otlp,
// decision_log.service, policy.bundle) stops check as it stops serve, in
// one line naming the key and the variable: check exits 0 only when serve
// would start.
func TestCheckReportsMissingServiceVariable(t *testing.T) {
	for _, tt := range []struct{ section, key string }{
		{"tracing:\n  otlp:\n    endpoint: http://127.0.0.1:1/v1/traces\n    insecure: true\n    headers: {authorization: \"Bearer ${MCPXFW_TEST_UNSET_TOKEN}\"}\n",
			"tracing.otlp.headers.authorization"},
		{"decision_log:\n  service:\n    url: http://127.0.0.1:1\n    credentials: {bearer: {token: \"${MCPXFW_TEST_UNSET_TOKEN}\"}}\n",
			"decision_log.service.credentials.bearer.token"},
		{"policy:\n  bundle:\n    url: http://127.0.0.1:1\n    headers: {X-Key: \"${MCPXFW_TEST_UNSET_TOKEN}\"}\n",
			"policy.bundle.headers.x-key"}, // viper lower-cases keys
	} {
		cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		top := tt.section[:strings.Index(tt.section, "\n")+1]
		writeFile(t, filepath.Dir(cfg), "mcpx-fw.yaml", strings.Replace(string(b), top, tt.section, 1))
		if !strings.Contains(string(b), top) {
			appendConfig(t, cfg, tt.section)
		}
		for _, sub := range []string{"check", "serve"} {
			res := runCLI(t, sub, "--config", cfg)
			if res.code != exitFailure || !strings.Contains(res.stderr, tt.key+": ${MCPXFW_TEST_UNSET_TOKEN} is not set") || !oneLine(res.stderr) {
				t.Errorf("%s with %s: exit %d, stderr %q; want 1 and one line naming the key and the variable", sub, tt.key, res.code, res.stderr)
			}
		}
	}
}

// TestCheckWithoutUserNamespaces: on a system that forbids user
// namespaces (here: user.max_user_namespaces=0 inside a namespace of the
// test's own), check and serve refuse a config that isolates, in one line
// naming the server, the setting that forbids it and the ways out; with
// isolation.default: none they start, saying the upstream is not isolated.
func TestCheckWithoutUserNamespaces(t *testing.T) {
	if isolationUnavailable != nil {
		t.Skipf("this system cannot isolate: %v", isolationUnavailable)
	}
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	run := func(env []string, sub string) cliResult {
		cmd := exec.CommandContext(t.Context(), "/bin/sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" "$1" --config "$2"`, binary, sub, cfg)
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{HostID: os.Getgid(), Size: 1}}}
		return mustRun(t, cmd)
	}
	for _, sub := range []string{"check", "serve"} {
		res := run(nil, sub)
		for _, want := range []string{"server peer: isolation is namespaces, but this system cannot isolate", "user.max_user_namespaces=0", "isolation: none"} {
			if res.code != exitFailure || !oneLine(res.stderr) || !strings.Contains(res.stderr, want) {
				t.Errorf("%s: exit %d, stderr %q; want 1 and one line with %q", sub, res.code, res.stderr, want)
			}
		}
	}
	res := run([]string{"MCPXFW_ISOLATION_DEFAULT=none"}, "check")
	if res.code != 0 || !strings.Contains(res.stdout, "server peer: not isolated: isolation.default is none\n") {
		t.Errorf("check with isolation.default none: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}
