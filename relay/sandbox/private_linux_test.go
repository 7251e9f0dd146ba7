package sandbox_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// tempAttempt is what the isolated command of TestPrivateTemp looks for:
// files the user's other processes keep in the shared folders, a System V
// shared memory segment, a terminal.
type tempAttempt struct {
	Files   []string // in /tmp, /var/tmp, /dev/shm outside
	Sibling string   // a file next to the program, in /tmp outside
	Program string   // the program's own path
	ShmKey  int      // a System V segment's key outside
	PTY     string   // /dev/pts/N of a terminal opened outside
	Leave   string   // a file it makes in its /tmp
}

type tempReport struct {
	Listed     map[string][]string // each shared folder's entries
	Read       []string            // outside files it read
	Wrote      bool                // made Leave
	ProgramRW  bool                // opened its program for writing
	ShmFound   bool
	PTYFound   bool
	OwnPTY     string   // a terminal of its own, or why not
	Consoles   []string // console devices that are not /dev/null
	TMPDIR     string
	TMPDIRMode string
}

// insideTemp is the isolated command of TestPrivateTemp.
func insideTemp() int {
	var a tempAttempt
	if err := json.Unmarshal([]byte(os.Getenv(argsEnv)), &a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r := tempReport{Listed: map[string][]string{}, TMPDIR: os.Getenv("TMPDIR")}
	for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			r.Listed[d] = append(r.Listed[d], e.Name())
		}
	}
	for _, f := range append(a.Files, a.Sibling) {
		if _, err := os.ReadFile(f); err == nil {
			r.Read = append(r.Read, f)
		}
	}
	r.Wrote = os.WriteFile(a.Leave, []byte("left"), 0o600) == nil
	if f, err := os.OpenFile(a.Program, os.O_WRONLY, 0); err == nil {
		r.ProgramRW = true
		f.Close()
	}
	_, err := unix.SysvShmGet(a.ShmKey, 0, 0)
	r.ShmFound = err == nil
	_, err = os.Stat(a.PTY)
	r.PTYFound = err == nil
	r.OwnPTY = ownPTY()
	r.Consoles = uncoveredConsoles()
	if fi, err := os.Stat(r.TMPDIR); err == nil {
		r.TMPDIRMode = fi.Mode().String()
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// uncoveredConsoles are the virtual consoles' devices that are something
// else than /dev/null.
func uncoveredConsoles() []string {
	var null, st unix.Stat_t
	if unix.Stat("/dev/null", &null) != nil {
		return []string{"/dev/null"}
	}
	var out []string
	for _, pattern := range []string{"/dev/tty[0-9]*", "/dev/vcs*"} {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if unix.Stat(m, &st) != nil || st.Rdev != null.Rdev {
				out = append(out, m)
			}
		}
	}
	return out
}

// openPTY opens a terminal's master and returns it with its /dev/pts path.
func openPTY() (*os.File, string, error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", err
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		return nil, "", err
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(fd)
		return nil, "", err
	}
	return os.NewFile(uintptr(fd), "ptmx"), "/dev/pts/" + strconv.Itoa(n), nil
}

// ownPTY is the path of a terminal the command opens for itself, or why
// it could not.
func ownPTY() string {
	f, path, err := openPTY()
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	slave, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err.Error()
	}
	slave.Close()
	return path
}

// TestPrivateTemp: an isolated command has /tmp, /var/tmp and /dev/shm of
// its own, empty, with TMPDIR its /tmp: it sees none of the files the
// user's other processes keep there, and what it leaves there nobody else
// sees. Its program, built into /tmp as `go test` and `go run` build, still
// runs, read-only, with nothing next to it. It sees no System V segment
// and no terminal of the account's (pseudo-terminals, virtual consoles),
// and has terminals of its own.
func TestPrivateTemp(t *testing.T) {
	needSandbox(t)
	var a tempAttempt
	for _, dir := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		f, err := os.CreateTemp(dir, "mcpx-fw-shared-*")
		if err != nil {
			t.Logf("no file in %s: %v", dir, err)
			continue
		}
		f.WriteString("kept by another process")
		f.Close()
		t.Cleanup(func() { os.Remove(f.Name()) })
		a.Files = append(a.Files, f.Name())
	}
	progDir, err := os.MkdirTemp("/tmp", "mcpx-fw-prog-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(progDir) })
	a.Program = filepath.Join(progDir, "prog")
	copyExecutable(t, a.Program)
	a.Sibling = filepath.Join(progDir, "secret")
	mustWrite(t, a.Sibling, "next to the program")
	a.ShmKey = 0x6d637078 + os.Getpid()%4096
	shm, err := unix.SysvShmGet(a.ShmKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Fatalf("a System V segment: %v", err)
	}
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(shm, unix.IPC_RMID, nil) })
	pty, ptyPath, err := openPTY()
	if err != nil {
		t.Fatalf("a terminal: %v", err)
	}
	defer pty.Close()
	a.PTY = ptyPath
	a.Leave = filepath.Join("/tmp", filepath.Base(progDir)+"-left")
	t.Cleanup(func() { os.Remove(a.Leave) })

	args, _ := json.Marshal(a)
	env := sandbox.IsolatedEnviron(os.Environ(), map[string]string{roleEnv: "temp", argsEnv: string(args)})
	out, err := sandbox.Command(sandbox.Spec{Args: []string{a.Program}, Env: env, Dir: "/"}).Output()
	if err != nil {
		t.Fatalf("isolated command: %v\n%s", err, stderrOf(err))
	}
	var r tempReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	checkTempReport(t, a, r)
}

func checkTempReport(t *testing.T, a tempAttempt, r tempReport) {
	t.Helper()
	if r.TMPDIR != "/tmp" || r.TMPDIRMode != "dtrwxrwxrwx" {
		t.Errorf("TMPDIR %q (%s); want /tmp, its own (dtrwxrwxrwx)", r.TMPDIR, r.TMPDIRMode)
	}
	if !slices.Equal(r.Listed["/tmp"], []string{filepath.Base(filepath.Dir(a.Program))}) || len(r.Listed["/var/tmp"])+len(r.Listed["/dev/shm"]) > 0 {
		t.Errorf("the shared folders show %v; want only the program's folder, in /tmp", r.Listed)
	}
	if len(r.Read) > 0 || r.ProgramRW || !r.Wrote {
		t.Errorf("read %v, opened its program for writing %v, wrote in its /tmp %v; want none, false, true", r.Read, r.ProgramRW, r.Wrote)
	}
	if _, err := os.Stat(a.Leave); err == nil {
		t.Errorf("what it left in its /tmp (%s) is in the user's", a.Leave)
	}
	if r.ShmFound || r.PTYFound {
		t.Errorf("found the account's System V segment %v, its terminal %s %v; want neither", r.ShmFound, a.PTY, r.PTYFound)
	}
	if len(r.Consoles) > 0 {
		t.Errorf("console devices it can reach: %v; want each covered", r.Consoles)
	}
	if !strings.HasPrefix(r.OwnPTY, "/dev/pts/") {
		t.Errorf("a terminal of its own: %s", r.OwnPTY)
	}
}

// copyExecutable copies this test binary to path.
func copyExecutable(t *testing.T, path string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNamedFoldersInPrivateTemp: what the command's configuration names
// in /tmp stays there: the folder in /tmp holding its working folder,
// whole and writable as the user's (a project checked out in /tmp), and
// the one holding a path among its arguments (a script); another folder of
// the user's in /tmp, and a file directly in /tmp, are not there.
func TestNamedFoldersInPrivateTemp(t *testing.T) {
	needSandbox(t)
	tmp := func(pattern string) string {
		dir, err := os.MkdirTemp("/tmp", pattern)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	project, scripts, unnamed := tmp("mcpx-fw-project-"), tmp("mcpx-fw-scripts-"), tmp("mcpx-fw-unnamed-")
	wd := filepath.Join(project, "sub")
	script := filepath.Join(scripts, "server.js")
	loose := filepath.Join("/tmp", filepath.Base(unnamed)+"-loose")
	t.Cleanup(func() { os.Remove(loose) })
	mustWrite(t, filepath.Join(wd, "README"), "the project")
	mustWrite(t, script, "the script")
	mustWrite(t, filepath.Join(unnamed, "secret"), "another program's")
	mustWrite(t, loose, "another program's")
	a := keptAttempt{Read: []string{filepath.Join(wd, "README"), script, filepath.Join(unnamed, "secret"), loose}, Write: filepath.Join(wd, "made")}
	args, _ := json.Marshal(a)
	exe, _ := os.Executable()
	env := sandbox.IsolatedEnviron(os.Environ(), map[string]string{roleEnv: "kept", argsEnv: string(args)})
	out, err := sandbox.Command(sandbox.Spec{Args: []string{exe, script, loose}, Env: env, Dir: wd}).Output()
	if err != nil {
		t.Fatalf("isolated command: %v\n%s", err, stderrOf(err))
	}
	var r keptReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if want := []string{filepath.Join(wd, "README"), script}; !slices.Equal(r.Read, want) {
		t.Errorf("read %v; want only the project's and the script's files %v", r.Read, want)
	}
	for _, name := range []string{filepath.Base(project), filepath.Base(scripts)} {
		if !slices.Contains(r.Listed, name) {
			t.Errorf("its /tmp lists %v; want %s in it", r.Listed, name)
		}
	}
	for _, name := range []string{filepath.Base(unnamed), filepath.Base(loose)} {
		if slices.Contains(r.Listed, name) {
			t.Errorf("its /tmp lists %v; want no %s", r.Listed, name)
		}
	}
	if b, err := os.ReadFile(a.Write); err != nil || string(b) != "made inside" {
		t.Errorf("what it wrote in its working folder: %q, %v; want it in the user's project", b, err)
	}
}

// keptAttempt is what the isolated command of TestNamedFoldersInPrivateTemp
// tries; keptReport what it managed.
type keptAttempt struct {
	Read  []string
	Write string
}

type keptReport struct {
	Listed []string // /tmp's entries
	Read   []string // the files it read
}

// insideKept is the isolated command of TestNamedFoldersInPrivateTemp.
func insideKept() int {
	var a keptAttempt
	if err := json.Unmarshal([]byte(os.Getenv(argsEnv)), &a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var r keptReport
	ents, _ := os.ReadDir("/tmp")
	for _, e := range ents {
		r.Listed = append(r.Listed, e.Name())
	}
	for _, f := range a.Read {
		if _, err := os.ReadFile(f); err == nil {
			r.Read = append(r.Read, f)
		}
	}
	if err := os.WriteFile(a.Write, []byte("made inside"), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// TestHiddenInKeptFolder: a path to hide inside a folder of /tmp the
// command keeps (its working folder's, a path among its arguments: here a
// symbolic link to the state dir) is hidden all the same: the state dir
// and the config in the kept project read and list as nothing, take no
// writes, and neither they nor the kept folder can be unmounted or moved.
func TestHiddenInKeptFolder(t *testing.T) {
	needSandbox(t)
	proj, err := os.MkdirTemp("/tmp", "mcpx-fw-kept-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(proj) })
	state, cfg, link := filepath.Join(proj, "state"), filepath.Join(proj, "mcpx-fw.yaml"), filepath.Join(proj, "state-link")
	mustWrite(t, filepath.Join(state, "reviews.db"), "queue")
	mustWrite(t, cfg, "token: s3cret")
	mustWrite(t, filepath.Join(proj, "sub", "README"), "the project")
	mustLink(t, "state", link)
	a := attempt{Files: []string{cfg, filepath.Join(state, "reviews.db"), filepath.Join(link, "reviews.db")}, Dirs: []string{state, link},
		Rename: []string{state, cfg, proj}, Outside: os.Getpid()}
	args, _ := json.Marshal(a)
	exe, _ := os.Executable()
	env := sandbox.IsolatedEnviron(os.Environ(), map[string]string{roleEnv: "inside", argsEnv: string(args)})
	r := reportOf(t, sandbox.Command(sandbox.Spec{Args: []string{exe, link}, Env: env, Dir: filepath.Join(proj, "sub"), Hide: []string{state, cfg}}))
	checkNothingSeen(t, r)
	if len(r.Wrote)+len(r.Unmounted)+len(r.Renamed) > 0 {
		t.Errorf("wrote %v, unmounted %v, renamed %v: want none", r.Wrote, r.Unmounted, r.Renamed)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "reviews.db")); string(b) != "queue" {
		t.Errorf("the queue now holds %q", b)
	}
}

// TestHiddenThroughPrivateTemp: a path to hide given through /tmp (a
// config named by a link in /tmp, to a link in the home, to the real file)
// leads the command nowhere, though the link in /tmp is not in its /tmp:
// what it leads to is hidden, given alone or with its real path (as serve
// gives it), and the link on the way, in the home, can be neither removed
// nor replaced.
func TestHiddenThroughPrivateTemp(t *testing.T) {
	needSandbox(t)
	for _, withReal := range []bool{false, true} {
		t.Run(fmt.Sprintf("with its real path %v", withReal), func(t *testing.T) {
			home := t.TempDir()
			secret := filepath.Join(home, "dotfiles", "mcpx-fw.yaml")
			mustWrite(t, secret, "token: s3cret")
			homeLink := filepath.Join(home, "mcpx-fw.yaml")
			mustLink(t, secret, homeLink)
			notes := filepath.Join(home, "notes.md")
			mustWrite(t, notes, "notes")
			tmpDir, err := os.MkdirTemp("/tmp", "mcpx-fw-link-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmpDir) })
			tmpLink := filepath.Join(tmpDir, "mcpx-fw.yaml")
			mustLink(t, homeLink, tmpLink)
			hide := []string{tmpLink}
			if withReal {
				hide = append(hide, secret)
			}
			ops := []plantOp{{Do: "read", Path: secret}, {Do: "read", Path: homeLink}, {Do: "remove", Path: homeLink},
				{Do: "rename", Path: notes, To: homeLink}}
			for i, err := range runPlant(t, ops, hide, nil, false) {
				if err == "" {
					t.Errorf("%s %s worked; want it refused", ops[i].Do, ops[i].Path)
				}
			}
			if to, err := os.Readlink(homeLink); err != nil || to != secret {
				t.Errorf("the link in the home leads to %q (%v); want %s", to, err, secret)
			}
		})
	}
}
