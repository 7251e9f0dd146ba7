package sandbox_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox/sandboxtest"
)

// The test binary is the launcher (sandbox.Main, as in mcpx-fw's main), and
// also, with roleEnv set, the command the tests start isolated.
const (
	roleEnv = "SANDBOX_TEST_ROLE"
	argsEnv = "SANDBOX_TEST_ARGS"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	switch os.Getenv(roleEnv) {
	case "inside":
		os.Exit(inside())
	case "sleeper":
		os.Exit(sleeper())
	case "serve":
		os.Exit(fakeServe())
	case "hold":
		block()
	case "exit":
		code, _ := strconv.Atoi(os.Getenv(argsEnv))
		os.Exit(code)
	case "temp":
		os.Exit(insideTemp())
	case "kept":
		os.Exit(insideKept())
	case "plant":
		os.Exit(plant())
	}
	os.Exit(runVisible(m))
}

// runVisible runs the tests with TMPDIR in a folder an isolated command
// sees (sandboxtest.VisibleTemp): what a test shows it (the paths
// TestHiding hides, say) must be where it would otherwise see them.
func runVisible(m *testing.M) int {
	dir, err := sandboxtest.VisibleTemp("sandbox-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	return m.Run()
}

// needSandbox skips a test where this system does not let an unprivileged
// process make a user and mount namespace; where it does, everything else
// is this package's to get right.
func needSandbox(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{roleEnv + "=exit", argsEnv + "=0"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{HostID: os.Getgid(), Size: 1}}}
	if err := cmd.Run(); err != nil {
		t.Skipf("this system does not allow user namespaces: %v", err)
	}
}

// TestProbe: on a system that allows user namespaces, the probe finds
// every path hidden, folders and files.
func TestProbe(t *testing.T) {
	needSandbox(t)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "state", "reviews.db"), "queue")
	mustWrite(t, filepath.Join(dir, "mcpx-fw.yaml"), "config")
	if err := sandbox.Probe([]string{filepath.Join(dir, "state"), filepath.Join(dir, "mcpx-fw.yaml"), filepath.Join(dir, "missing")}, nil); err != nil {
		t.Fatalf("Probe: %v", err)
	}
}

// self is the test binary, started isolated in a role.
func self(t *testing.T, role, args string, hide ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := sandbox.Environ(os.Environ(), map[string]string{roleEnv: role, argsEnv: args})
	return sandbox.Command(sandbox.Spec{Args: []string{exe}, Env: env, Hide: hide})
}

// attempt is what the isolated command tries; report is what it managed.
type attempt struct {
	Files, Dirs, Rename []string
	Outside             int // a pid outside: signal and ptrace it
}

type report struct {
	Read      map[string]string   // file -> what reading it gave
	Listed    map[string][]string // folder -> its entries
	Wrote     []string            // paths written to
	Unmounted []string            // hidden paths that came off
	Renamed   []string            // folders above them renamed
	Procs     []string            // /proc's numeric entries
	Signalled bool                // kill(Outside, 0) succeeded
	Traced    bool                // PTRACE_ATTACH to Outside succeeded
	UID, GID  int
	Env       []string
}

// inside is the isolated command of TestHiding: it tries every way at the
// hidden paths and prints what worked.
func inside() int {
	var a attempt
	if err := json.Unmarshal([]byte(os.Getenv(argsEnv)), &a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r := report{Read: map[string]string{}, Listed: map[string][]string{}, UID: os.Getuid(), GID: os.Getgid(), Env: os.Environ()}
	for _, f := range a.Files {
		b, _ := os.ReadFile(f)
		r.Read[f] = string(b)
		if err := os.WriteFile(f, []byte("forged"), 0o600); err == nil {
			if b, _ := os.ReadFile(f); string(b) == "forged" {
				r.Wrote = append(r.Wrote, f)
			}
		}
	}
	for _, d := range a.Dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			r.Listed[d] = append(r.Listed[d], e.Name())
		}
		if os.WriteFile(filepath.Join(d, "forged"), nil, 0o600) == nil {
			r.Wrote = append(r.Wrote, d)
		}
	}
	for _, p := range append(a.Files, a.Dirs...) {
		if unix.Unmount(p, unix.MNT_DETACH) == nil {
			r.Unmounted = append(r.Unmounted, p)
		}
	}
	for _, d := range a.Rename {
		if os.Rename(d, d+".moved") == nil {
			r.Renamed = append(r.Renamed, d)
			_ = os.Rename(d+".moved", d)
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			r.Procs = append(r.Procs, e.Name())
		}
	}
	r.Signalled = syscall.Kill(a.Outside, 0) == nil
	r.Traced = traced(a.Outside)
	_ = json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// traced attaches to pid and, if that worked, detaches again.
func traced(pid int) bool {
	if err := syscall.PtraceAttach(pid); err != nil {
		return false
	}
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, 0, nil)
	_ = syscall.PtraceDetach(pid)
	return true
}

// TestHiding: the isolated command cannot read, write, unmount or rename
// its way to the hidden paths, sees only its own PID namespace in /proc,
// cannot signal or trace a process outside, runs as the caller's uid and
// gid, and has exactly the environment it was given.
func TestHiding(t *testing.T) {
	needSandbox(t)
	root := t.TempDir()
	state := filepath.Join(root, "home", "state")
	secretFile := filepath.Join(root, "home", "mcpx-fw.yaml")
	link := filepath.Join(root, "link.yaml") // hidden by what it points to
	mustWrite(t, filepath.Join(state, "reviews.db"), "queue")
	mustWrite(t, filepath.Join(state, "seal.key"), "key")
	mustWrite(t, secretFile, "token: s3cret")
	if err := os.Symlink(secretFile, link); err != nil {
		t.Fatal(err)
	}
	a := attempt{Files: []string{secretFile, link, filepath.Join(state, "seal.key")}, Dirs: []string{state},
		Rename: []string{filepath.Join(root, "home"), root}, Outside: os.Getpid()}
	args, _ := json.Marshal(a)
	cmd := self(t, "inside", string(args), state, link, filepath.Join(root, "missing"))
	r := reportOf(t, cmd)
	checkNothingSeen(t, r)
	for _, got := range [][]string{r.Wrote, r.Unmounted, r.Renamed} {
		if len(got) > 0 {
			t.Errorf("wrote %v, unmounted %v, renamed %v: want none", r.Wrote, r.Unmounted, r.Renamed)
			break
		}
	}
	if b, _ := os.ReadFile(secretFile); string(b) != "token: s3cret" {
		t.Errorf("the hidden file now holds %q", b)
	}
	if slices.Contains(r.Procs, strconv.Itoa(os.Getpid())) || len(r.Procs) > 2 {
		t.Errorf("/proc shows %v; want the launcher and the command only", r.Procs)
	}
	if r.Signalled || r.Traced {
		t.Errorf("signalled the test process: %v, traced it: %v", r.Signalled, r.Traced)
	}
	if r.UID != os.Getuid() || r.GID != os.Getgid() {
		t.Errorf("runs as %d:%d; want %d:%d", r.UID, r.GID, os.Getuid(), os.Getgid())
	}
	wantEnv := sandbox.Environ(os.Environ(), map[string]string{roleEnv: "inside", argsEnv: string(args)})
	if !slices.Equal(r.Env, wantEnv) {
		t.Errorf("environment %q; want %q", r.Env, wantEnv)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// TestExitStatus: the launcher exits with the command's status; a command
// that cannot be found fails to start as with os/exec.
func TestExitStatus(t *testing.T) {
	needSandbox(t)
	for _, code := range []int{0, 3} {
		err := self(t, "exit", strconv.Itoa(code)).Run()
		var ee *exec.ExitError
		if got := 0; err != nil && errors.As(err, &ee) {
			got = ee.ExitCode()
			if got != code {
				t.Errorf("exit %d: launcher exited %d", code, got)
			}
		} else if err != nil || code != 0 {
			t.Errorf("exit %d: %v", code, err)
		}
	}
	err := sandbox.Command(sandbox.Spec{Args: []string{"mcpx-fw-no-such-program"}}).Start()
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("starting a missing program: %v; want exec.ErrNotFound", err)
	}
}

// sleeper starts a child that holds stdout open for good, prints "ready"
// and waits for SIGTERM, which makes it exit 42.
func sleeper() int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	child := exec.Command("/proc/self/exe")
	child.Env = []string{roleEnv + "=hold"}
	child.Stdout = os.Stdout
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready")
	<-sigs
	return 42
}

// TestSignalsForwarded: a SIGTERM to the launcher reaches the command,
// whose status the launcher then exits with.
func TestSignalsForwarded(t *testing.T) {
	needSandbox(t)
	cmd := self(t, "sleeper", "")
	out := startReady(t, cmd)
	defer out.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 42 {
		t.Fatalf("after SIGTERM: %v; want exit 42 from the command", err)
	}
}

// startReady starts cmd with its stdout on a pipe and waits for "ready".
func startReady(t *testing.T, cmd *exec.Cmd) io.ReadCloser {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		ready <- fmt.Sprintf("%q %v", line, err)
	}()
	select {
	case got := <-ready:
		if got != `"ready\n" <nil>` {
			t.Fatalf("want ready, got %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no ready line in 30s")
	}
	return out
}

// fakeServe stands for serve: it starts an isolated sleeper whose stdout is
// its own (the sleeper prints "ready"), and waits for it, or to be killed.
func fakeServe() int {
	exe, _ := os.Executable()
	cmd := sandbox.Command(sandbox.Spec{Args: []string{exe}, Env: []string{roleEnv + "=sleeper"}})
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// block waits until the process is killed.
func block() {
	for {
		_ = unix.Pause()
	}
}

// TestNoOrphans: whether the launcher is killed, or the process that
// started it (serve) is, nothing the command started survives: the pipe
// its child holds open closes at once, where that child, which never
// exits, would otherwise keep it open.
func TestNoOrphans(t *testing.T) {
	needSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"launcher killed", func() *exec.Cmd { return self(t, "sleeper", "") }},
		{"serve killed", func() *exec.Cmd {
			c := exec.Command(exe)
			c.Env = append(os.Environ(), roleEnv+"=serve")
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := tt.cmd()
			out := startReady(t, cmd)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := io.Copy(io.Discard, out); done <- err }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the command's grandchild still holds its stdout 10s after the kill")
			}
		})
	}
}

// reportOf runs the isolated command and reads the report it prints.
func reportOf(t *testing.T, cmd *exec.Cmd) report {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("isolated command: %v\n%s", err, stderrOf(err))
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	return r
}

// checkNothingSeen: the command read no byte of a hidden file and listed
// no entry of a hidden folder.
func checkNothingSeen(t *testing.T, r report) {
	t.Helper()
	for f, got := range r.Read {
		if got != "" {
			t.Errorf("read %s: %q; want nothing", f, got)
		}
	}
	for d, ents := range r.Listed {
		t.Errorf("listed %s: %v; want nothing", d, ents)
	}
}
