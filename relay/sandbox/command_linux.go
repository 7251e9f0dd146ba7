package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supported reports whether this build can isolate at all (Linux); Probe
// says whether this system lets it.
const Supported = true

// Command returns what runs s isolated: the launcher (this binary), which
// starts s.Args[0] inside the namespaces. The program is looked up as
// exec.Command looks it up, with the caller's PATH; when it cannot be
// found, the command's Start fails with exec.Command's error.
func Command(s Spec) *exec.Cmd {
	inner := exec.Command(s.Args[0], s.Args[1:]...)
	dir, err := absDir(s.Dir)
	if err != nil {
		err = fmt.Errorf("working folder: %w", err)
	}
	l := launch{Path: inner.Path, Args: s.Args, Env: s.Env, Dir: dir, Hide: s.Hide, ReadOnly: s.ReadOnly, UID: os.Getuid(), GID: os.Getgid()}
	cmd := launcherCommand(l, launcherArg)
	cmd.Err = cmp.Or(inner.Err, err)
	return cmd
}

// absDir is the folder the command starts in, as an absolute path: the
// launcher changes into it by name after its mounts, so a working folder
// inherited from serve cannot be a way around them.
func absDir(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}

// launcherCommand starts this binary as the launcher of l, in new user,
// mount, PID and IPC namespaces. The user namespace maps root inside to the
// caller's uid and gid (and nothing else), so the launcher keeps its
// capabilities across exec for the mounts, over nothing but itself. The IPC
// namespace holds the System V shared memory, semaphores and message
// queues, and the POSIX message queues, the command makes, and shows it
// none of the account's others (as its private /dev/shm does for POSIX
// shared memory). It has
// a session of its own (no terminal: keystrokes cannot be pushed into
// serve's), and dies with serve (Pdeathsig), which kills its namespace.
func launcherCommand(l launch, arg0 string) *exec.Cmd {
	spec, _ := json.Marshal(l) // strings and ints only: cannot fail
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{arg0}
	cmd.Env = []string{specEnv + "=" + string(spec)}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: l.UID, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: l.GID, Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
		Setsid:                     true,
	}
	return cmd
}

// probeTimeout bounds the probe: a launcher and a check, a few
// milliseconds on an idle machine.
const probeTimeout = 20 * time.Second

// Probe starts the launcher once with a check in place of a command: the
// check runs where an upstream would and verifies that every path of hide
// is hidden, that every path of readOnly takes no writes, and that none
// can be unmounted. A nil error means isolated upstreams can start here;
// otherwise the error says what failed and, where the system restricts
// user namespaces, which setting does.
func Probe(hide, readOnly []string) error {
	l := launch{Path: "/proc/self/exe", Args: []string{checkArg}, Dir: "/", Hide: hide, ReadOnly: readOnly, UID: os.Getuid(), GID: os.Getgid()}
	spec, _ := json.Marshal(launch{Hide: hide, ReadOnly: readOnly})
	l.Env = []string{specEnv + "=" + string(spec)}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := launcherCommand(l, launcherArg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return explain(fmt.Errorf("cannot create the namespaces: %w", err))
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	if err := cmd.Wait(); err != nil {
		return explain(fmt.Errorf("%s (%w)", firstLine(stderr.String()), err))
	}
	return nil
}

// firstLine is the first line of the launcher's or the check's complaint,
// without its "mcpx-fw launcher: " prefix, capped: it goes into an error.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	line = strings.TrimPrefix(line, "mcpx-fw launcher: ")
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	if line == "" {
		return "the launcher failed"
	}
	return line
}

// restrictions are the system settings that turn unprivileged user
// namespaces off, with what each means.
var restrictions = []struct{ file, value, says string }{
	{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
		"AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)"},
	{"/proc/sys/kernel/unprivileged_userns_clone", "0",
		"unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)"},
	{"/proc/sys/user/max_user_namespaces", "0", "user namespaces are disabled (user.max_user_namespaces=0)"},
}

// explain adds to a failed probe the setting that explains it, if one
// does; else, for a refusal, the usual suspects.
func explain(err error) error {
	for _, r := range restrictions {
		if b, rerr := os.ReadFile(r.file); rerr == nil && strings.TrimSpace(string(b)) == r.value {
			return fmt.Errorf("%w: %s", err, r.says)
		}
	}
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOSYS) {
		return fmt.Errorf("%w: a seccomp profile (as in most containers) or a security module forbids user namespaces", err)
	}
	return err
}

// Undumpable makes this process non-dumpable: processes of the same
// account can then neither ptrace it nor read its /proc/<pid>/environ,
// fd, mem or root, where its credentials (the ${VAR} values of every
// server) and its view of the state dir are.
func Undumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
