package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// forwarded are the signals the launcher passes on to the command: those
// a supervisor sends to ask a process to stop or reload. SIGKILL cannot be
// caught: it kills the launcher, and with it the whole PID namespace.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// runLauncher is the launcher's whole life, as PID 1 of its namespaces:
// hide, start the command, pass signals on, reap, and exit with the
// command's status.
func runLauncher(l launch) int {
	// No-new-privs and Landlock hold for the thread that sets them, and the
	// command is forked from this one.
	runtime.LockOSThread()
	var err error
	if l.Path, err = isolate(l); err != nil {
		fail(exitSetup, err)
	}
	if err := enterable(l.Dir); err != nil {
		fail(exitNoStart, err)
	}
	chld := make(chan os.Signal, 1) // one pending SIGCHLD is enough: each reaps all
	fwd := make(chan os.Signal, 16)
	signal.Notify(chld, syscall.SIGCHLD)
	signal.Notify(fwd, forwarded...)
	pid, err := startCommand(l)
	if err != nil {
		fail(exitNoStart, fmt.Errorf("start %s: %w", l.Path, err))
	}
	releaseStdio()
	return supervise(pid, chld, fwd)
}

// isolate makes the launcher's mount namespace the command's view: private
// mounts, temporary folders and terminals of its own, hidden paths and
// read-only ones, a /proc of its own PID namespace; then it drops what the
// command must not gain (see restrict). It returns the path to start
// l's program by (see privateTemp). The paths to hide and keep are
// resolved first, while the user's temporary folders are in view; the
// command's own are mounted before they are protected: what was in the
// user's is gone, with nothing left there to hide or keep.
func isolate(l launch) (string, error) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return "", fmt.Errorf("make the launcher non-dumpable: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "", fmt.Errorf("make mounts private: %w", err)
	}
	protect := resolveProtection(l.Hide, l.ReadOnly)
	program, err := privateTemp(l.Path, l.Dir, l.Args[min(1, len(l.Args)):])
	if err != nil {
		return "", err
	}
	if err := privateTerminals(); err != nil {
		return "", err
	}
	if err := protectPaths(protect.present()); err != nil {
		return "", err
	}
	if err := freshProc(); err != nil {
		return "", err
	}
	if err := os.Chdir("/"); err != nil {
		return "", err
	}
	return program, restrict()
}

// startCommand starts the command in a further user and mount namespace,
// owned by the launcher's. Every mount the launcher made is locked there:
// the command, whatever it is inside, cannot unmount one to see what is
// under it, nor move it. Inside, it runs as the caller's own uid and gid
// (mapped to the launcher's root, which is the caller), so it sees the ids
// it would see outside, with no capability over the launcher's namespaces.
// Its folder is entered by name, after the mounts.
func startCommand(l launch) (int, error) {
	return syscall.ForkExec(l.Path, l.Args, &syscall.ProcAttr{
		Dir:   l.Dir,
		Env:   l.Env,
		Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{
			Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: l.UID, HostID: 0, Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: l.GID, HostID: 0, Size: 1}},
			GidMappingsEnableSetgroups: false,
			Pdeathsig:                  syscall.SIGKILL,
		},
	})
}

// releaseStdio points the launcher's own stdin and stdout at /dev/null:
// the command has them, and the streams end when it does, not when the
// launcher lets go.
func releaseStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	_ = unix.Dup3(int(null.Fd()), 0, 0)
	_ = unix.Dup3(int(null.Fd()), 1, 0)
}

// supervise passes signals on to the command and reaps every child (as
// PID 1, orphans of the command are the launcher's) until the command
// exits; its status is the launcher's. Exiting kills whatever the command
// left running in the namespace.
func supervise(pid int, chld, fwd <-chan os.Signal) int {
	for {
		select {
		case sig := <-fwd:
			_ = syscall.Kill(pid, sig.(syscall.Signal))
		case <-chld:
			if status, done := reap(pid); done {
				return status
			}
		}
	}
}

// reap collects every child that has exited, and reports the command's
// status once it is one of them.
func reap(pid int) (status int, done bool) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || got <= 0 {
			return 0, false
		}
		if got != pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal()), true
		}
		return ws.ExitStatus(), true
	}
}
