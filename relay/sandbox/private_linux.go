package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// privateFolders are the folders every process of the account writes and
// finds things in by name: the review CLI's peers, editors and other
// programs put their temporary files (a document being edited, a socket,
// a lock) in /tmp and /var/tmp, and their shared memory in /dev/shm. An
// isolated command gets each as an empty folder of its own (a tmpfs,
// sticky and writable as the folder it replaces, that lives as long as its
// namespace), so it can neither read nor swap what the user's other
// processes keep there, and nothing it leaves there outlives it. Whatever
// was hidden under them (X11's and tmux's sockets in /tmp) is gone with
// the rest.
var privateFolders = []string{"/tmp", "/var/tmp", "/dev/shm"}

// privateTemp gives the command its own temporary folders. What the
// command's configuration names in them stays reachable at its path: its
// program (that one file, bound read-only: a binary `go run` or `go test`
// built, say), and each folder directly in a temporary folder that holds
// its working folder or a path among its arguments (a project checked out
// in /tmp/proj, a script under it), bound whole, as the user sees it.
// Nothing else of the user's temporary folders comes with them: another
// program's files there stay out of sight. It returns the program's path
// as the command is started by: resolved, when bound.
func privateTemp(program, dir string, args []string) (string, error) {
	dirs := privateDirs()
	fd, real, err := openProgram(program, dirs)
	if err != nil {
		return "", err
	}
	if fd >= 0 {
		defer unix.Close(fd)
	}
	kept, err := openKept(namedPaths(dir, args), dirs)
	if err != nil {
		return "", err
	}
	defer closeKept(kept)
	for _, dir := range dirs {
		if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return "", fmt.Errorf("a private %s: %w", dir, err)
		}
	}
	for _, k := range kept {
		if err := bindKept(k); err != nil {
			return "", err
		}
	}
	switch {
	case fd < 0:
		return program, nil
	case slices.ContainsFunc(kept, func(k keptFolder) bool { return within(real, k.path) }):
		return real, nil // reachable in a kept folder
	}
	return real, bindProgram(fd, real)
}

// namedPaths are the paths the command's configuration names: its working
// folder, and each argument that names something that exists, as an
// absolute path or one relative to that folder.
func namedPaths(dir string, args []string) []string {
	out := []string{dir}
	for _, a := range args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		if !filepath.IsAbs(a) {
			a = filepath.Join(dir, a)
		}
		if _, err := os.Lstat(a); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// keptFolder is a folder of the user's, directly in a temporary folder,
// that the command names, opened before the temporary folder is replaced.
type keptFolder struct {
	path string
	fd   int
}

// openKept opens, once each, the folders directly in one of dirs that hold
// one of paths (resolved through symbolic links); a path that is one of
// dirs itself names nothing to keep.
func openKept(paths, dirs []string) ([]keptFolder, error) {
	var kept []keptFolder
	for _, p := range paths {
		top := topIn(p, dirs)
		if top == "" || slices.ContainsFunc(kept, func(k keptFolder) bool { return k.path == top }) {
			continue
		}
		fd, err := unix.Open(top, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			closeKept(kept)
			return nil, fmt.Errorf("open %s, which the command names: %w", top, err)
		}
		kept = append(kept, keptFolder{path: top, fd: fd})
	}
	return kept, nil
}

// topIn is the entry directly in one of dirs that holds p, when it is a
// folder; "" when p is in none of them, is one of them, or is a file
// directly in one (nothing of which is kept but the program).
func topIn(p string, dirs []string) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	for _, d := range dirs {
		rel, err := filepath.Rel(d, real)
		if err != nil || rel == "." || !within(real, d) {
			continue
		}
		top := filepath.Join(d, strings.Split(rel, string(filepath.Separator))[0])
		if isDir(top) {
			return top
		}
	}
	return ""
}

func closeKept(kept []keptFolder) {
	for _, k := range kept {
		unix.Close(k.fd)
	}
}

// bindKept binds the opened folder, and everything mounted under it, at
// its path in the fresh temporary folder.
func bindKept(k keptFolder) error {
	if err := os.Mkdir(k.path, 0o700); err != nil {
		return fmt.Errorf("keep %s: %w", k.path, err)
	}
	src := fmt.Sprintf("/proc/self/fd/%d", k.fd)
	if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("keep %s: %w", k.path, err)
	}
	return nil
}

// privateDirs are the private folders this system has, resolved through
// symbolic links (/var/tmp may lead to /tmp), each once, none inside
// another.
func privateDirs() []string {
	var out []string
	for _, p := range privateFolders {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() {
			out = append(out, real)
		}
	}
	slices.Sort(out)
	kept := out[:0]
	for _, d := range out {
		if !slices.ContainsFunc(kept, func(k string) bool { return k == d || within(d, k) }) {
			kept = append(kept, d)
		}
	}
	return kept
}

// openProgram opens the program (O_PATH: it is neither read nor run
// through this descriptor) when it lies in one of dirs, before they are
// replaced; else it returns -1. A program that cannot be resolved is left
// to the start, which reports it.
func openProgram(program string, dirs []string) (int, string, error) {
	if within(program, "/proc") {
		return -1, "", nil // /proc/self/exe: the launcher itself, reached by its link
	}
	real, err := filepath.EvalSymlinks(program)
	if err != nil || !slices.ContainsFunc(dirs, func(d string) bool { return within(real, d) }) {
		return -1, "", nil
	}
	fd, err := unix.Open(real, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("open the program %s: %w", real, err)
	}
	return fd, real, nil
}

// bindProgram binds the opened program at its path in the fresh folder,
// read-only: the command can run it, never change it.
func bindProgram(fd int, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("bind the program %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o500)
	if err != nil {
		return fmt.Errorf("bind the program %s: %w", path, err)
	}
	f.Close()
	src := fmt.Sprintf("/proc/self/fd/%d", fd)
	if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind the program %s: %w", path, err)
	}
	const ro = unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV
	if err := unix.Mount("", path, "", ro, ""); err != nil {
		return fmt.Errorf("make the program %s read-only: %w", path, err)
	}
	return nil
}

// privateTerminals gives the command terminals of its own: a new instance
// of devpts over /dev/pts (which /dev/ptmx then allocates from), so the
// operator's terminals (/dev/pts/N, owned by the account) can be neither
// read, which steals keystrokes, nor written, which paints what the
// operator's editor shows. The virtual consoles' devices, which a login on
// a console makes the user's (its tty, and its screen's contents in vcs),
// are covered for the same reason. And a message queue folder of its IPC
// namespace goes over /dev/mqueue, where one is mounted.
func privateTerminals() error {
	if isDir("/dev/pts") {
		if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
			return fmt.Errorf("terminals of its own (/dev/pts): %w", err)
		}
	}
	if err := coverConsoles(); err != nil {
		return err
	}
	if isDir("/dev/mqueue") {
		if err := unix.Mount("mqueue", "/dev/mqueue", "mqueue", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("message queues of its own (/dev/mqueue): %w", err)
		}
	}
	return nil
}

// consoleDevices are the virtual consoles' devices: /dev/tty1 and the
// rest, and /dev/vcs, vcsa and vcsu with theirs.
var consoleDevices = []string{"/dev/tty[0-9]*", "/dev/vcs*"}

// coverConsoles puts /dev/null over each console device.
func coverConsoles() error {
	for _, pattern := range consoleDevices {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if err := cover(target{path: m}); err != nil {
				return err
			}
		}
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// enterable checks the command's working folder once the mounts are made:
// it is entered by name, and one inside a private folder is not there.
func enterable(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		err = errors.New("not a folder")
	}
	if slices.ContainsFunc(privateFolders, func(p string) bool { return within(dir, p) }) {
		return fmt.Errorf("working folder %s: %w; an isolated upstream has %s of its own, with only the folders its command names", dir, err, strings.Join(privateFolders, ", "))
	}
	return fmt.Errorf("working folder %s: %w", dir, err)
}
