package sandbox_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// plantOp is one thing the isolated command of TestReadOnly tries: write
// (append to a file), create (a new file, as a program planted on PATH
// is), read (refused unless it reads something), mkdir, rename (Path to
// To), link (a hard link of Path at To),
// remove, unmount, remount (drop read-only), setattr (clear read-only
// with mount_setattr, recursively), bind (Path onto To, a new folder in
// its /tmp, then append to To/File), bindrec (the same, recursively).
type plantOp struct {
	Do, Path, To, File string
}

// nestedEnv set makes plant start itself again in a user and mount
// namespace of its own, where it is root, as a command that is not root
// where it runs can, and try its ops there.
const nestedEnv = "SANDBOX_TEST_NESTED"

// plant runs the ops of argsEnv in order and prints, for each, the error it
// met ("" when it worked).
func plant() int {
	if os.Getenv(nestedEnv) != "" {
		return plantNested()
	}
	var ops []plantOp
	if err := json.Unmarshal([]byte(os.Getenv(argsEnv)), &ops); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out := make([]string, len(ops))
	for i, op := range ops {
		if err := op.run(); err != nil {
			out[i] = err.Error()
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
	return 0
}

// plantNested runs plant in a new user and mount namespace.
func plantNested() int {
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = []string{roleEnv + "=plant", argsEnv + "=" + os.Getenv(argsEnv)}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{HostID: os.Getgid(), Size: 1}}}
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "a namespace of its own:", err)
		return 2
	}
	return 0
}

func (op plantOp) run() error {
	switch op.Do {
	case "write":
		return appendTo(op.Path)
	case "create":
		return os.WriteFile(op.Path, []byte("#!/bin/sh\necho planted\n"), 0o755)
	case "read":
		return readSomething(op.Path)
	case "mkdir":
		return os.Mkdir(op.Path, 0o755)
	case "rename":
		return os.Rename(op.Path, op.To)
	case "link":
		return os.Link(op.Path, op.To)
	case "remove":
		return os.Remove(op.Path)
	case "setattr":
		return unix.MountSetattr(unix.AT_FDCWD, op.Path, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
	case "unmount":
		return unix.Unmount(op.Path, unix.MNT_DETACH)
	case "remount":
		return unix.Mount("", op.Path, "", unix.MS_BIND|unix.MS_REMOUNT, "")
	case "bind", "bindrec":
		flags := uintptr(unix.MS_BIND)
		if op.Do == "bindrec" {
			flags |= unix.MS_REC
		}
		if err := os.MkdirAll(op.To, 0o700); err != nil {
			return err
		}
		if err := unix.Mount(op.Path, op.To, "", flags, ""); err != nil {
			return err
		}
		return appendTo(filepath.Join(op.To, op.File))
	}
	return fmt.Errorf("unknown op %q", op.Do)
}

// readSomething fails unless p reads as something.
func readSomething(p string) error {
	b, err := os.ReadFile(p)
	if err == nil && len(b) == 0 {
		err = errors.New("read nothing")
	}
	return err
}

func appendTo(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\necho planted\n")
	return errors.Join(err, f.Close())
}

// TestReadOnly: an isolated command cannot change the user's entry points
// kept read-only, by any route: not a shell start-up file (written in
// place, replaced by a rename, removed), not one reached through a
// symbolic link (the link replaced, its target written or its folder moved
// aside), not an editor's folder (a file added, the folder or the one
// above it moved aside), not a folder on PATH in the home or outside it
// (a program planted), and the mounts that keep them cannot be undone
// (unmounted, remounted writable, the home bound elsewhere without them).
// A hidden path stays hidden, inside a read-only folder (~/.local) or next
// to one (~/.config/mcpx-fw beside ~/.config/nvim), and the link it was
// given by (a config's) cannot be pointed elsewhere. The rest of the home is
// written as before: a project file edited and renamed, a new file and a
// new folder made. And the launcher makes nothing in the home: an entry
// point that does not exist is still missing after the command ran.
func TestReadOnly(t *testing.T) {
	needSandbox(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	optBin := filepath.Join(root, "opt", "bin")
	for p, content := range map[string]string{
		".bashrc": "the operator's bashrc", "dotfiles/profile": "the operator's profile", "dotfiles/git/config": "[core]",
		".config/nvim/init.lua": "-- the operator's", ".local/bin/tool": "#!/bin/sh", "project/notes.md": "notes",
		".local/state/mcpx-fw/reviews.db": "queue", ".config/mcpx-fw/mcpx-fw.yaml": "config",
	} {
		mustWrite(t, filepath.Join(home, p), content)
	}
	mustWrite(t, filepath.Join(optBin, "tool"), "#!/bin/sh")
	mustLink(t, "dotfiles/profile", filepath.Join(home, ".profile"))
	mustLink(t, "../dotfiles/git", filepath.Join(home, ".config", "git"))
	mustLink(t, ".config/mcpx-fw/mcpx-fw.yaml", filepath.Join(home, "mcpx-fw.yaml"))
	readOnly := []string{filepath.Join(home, ".bashrc"), filepath.Join(home, ".profile"), filepath.Join(home, ".config", "nvim"),
		filepath.Join(home, ".config", "git"), filepath.Join(home, ".local", "bin"), optBin, filepath.Join(home, ".zshrc"),
		filepath.Join(home, ".local")}
	hide := []string{filepath.Join(home, ".local", "state", "mcpx-fw"), filepath.Join(home, "mcpx-fw.yaml")}
	before := snapshot(t, root)

	h := func(p string) string { return filepath.Join(home, p) }
	attacks := []plantOp{
		{Do: "write", Path: h(".bashrc")},
		{Do: "rename", Path: h("project/notes.md"), To: h(".bashrc")},
		{Do: "remove", Path: h(".bashrc")},
		{Do: "write", Path: h(".profile")},
		{Do: "write", Path: h("dotfiles/profile")},
		{Do: "remove", Path: h(".profile")},
		{Do: "rename", Path: h("dotfiles"), To: h("dotfiles.moved")},
		{Do: "create", Path: h(".config/nvim/plugin.lua")},
		{Do: "rename", Path: h(".config/nvim"), To: h("nvim.moved")},
		{Do: "rename", Path: h(".config"), To: h("config.moved")},
		{Do: "create", Path: h(".config/git/hooks")},
		{Do: "remove", Path: h(".config/git")},
		{Do: "create", Path: h(".local/bin/vi")},
		{Do: "write", Path: h(".local/bin/tool")},
		{Do: "rename", Path: h(".local"), To: h("local.moved")},
		{Do: "create", Path: filepath.Join(optBin, "mcpx-fw")},
		{Do: "rename", Path: filepath.Dir(optBin), To: filepath.Join(root, "opt.moved")},
		{Do: "link", Path: h("project/notes.md"), To: h(".local/bin/vi")},
		{Do: "create", Path: h(".local/state/mcpx-fw/reviews.db")},
		{Do: "read", Path: h(".local/state/mcpx-fw/reviews.db")},
		{Do: "read", Path: h(".config/mcpx-fw/mcpx-fw.yaml")},
		{Do: "rename", Path: h(".config/mcpx-fw"), To: h("mcpx-fw.moved")},
		{Do: "read", Path: h("mcpx-fw.yaml")},
		{Do: "remove", Path: h("mcpx-fw.yaml")},
		{Do: "rename", Path: h("project/notes.md"), To: h("mcpx-fw.yaml")},
		{Do: "mkdir", Path: h(".local/share")},
	}
	attacks = append(attacks, mountAttacks(home, optBin)...)
	controls := []plantOp{
		{Do: "write", Path: h("project/notes.md")},
		{Do: "rename", Path: h("project/notes.md"), To: h("project/notes-2.md")},
		{Do: "create", Path: h("new-file")},
		{Do: "mkdir", Path: h(".cache")},
		{Do: "create", Path: h(".cache/npm-like")},
	}
	got := runPlant(t, append(slices.Clone(attacks), controls...), hide, readOnly, false)
	rel := func(p string) string { return strings.TrimPrefix(p, root) }
	for i, op := range attacks {
		if got[i] == "" {
			t.Errorf("%s %s %s worked; want it refused", op.Do, rel(op.Path), rel(op.To))
		} else {
			t.Logf("refused: %s %s: %s", op.Do, rel(op.Path), lastPart(got[i]))
		}
	}
	for i, op := range controls {
		if err := got[len(attacks)+i]; err != "" {
			t.Errorf("%s %s %s: %s; want it to work", op.Do, rel(op.Path), rel(op.To), lastPart(err))
		}
	}
	after := snapshot(t, root)
	if !maps.Equal(without(before, "home/project/notes.md"), without(after, "home/project/notes-2.md", "home/new-file", "home/.cache", "home/.cache/npm-like")) {
		t.Errorf("the files outside the command's ordinary writes changed:\nbefore %v\nafter  %v", before, after)
	}
	nested := mountAttacks(home, optBin)
	for i, err := range runPlant(t, nested, hide, readOnly, true) {
		if err == "" {
			t.Errorf("in a namespace of its own: %s %s worked; want it refused", nested[i].Do, rel(nested[i].Path))
		}
	}
	if again := snapshot(t, root); !maps.Equal(after, again) {
		t.Errorf("after the attacks from a namespace of its own: %v; want %v", again, after)
	}
}

// mountAttacks try to undo the mounts that keep home's entry points
// read-only, then write through what they made.
func mountAttacks(home, optBin string) []plantOp {
	return []plantOp{
		{Do: "unmount", Path: filepath.Join(home, ".bashrc")},
		{Do: "remount", Path: filepath.Join(home, ".bashrc")},
		{Do: "setattr", Path: filepath.Join(home, ".bashrc")},
		{Do: "write", Path: filepath.Join(home, ".bashrc")},
		{Do: "unmount", Path: filepath.Join(home, ".local", "bin")},
		{Do: "remount", Path: filepath.Join(home, ".local", "bin")},
		{Do: "setattr", Path: filepath.Join(home, ".local", "bin")},
		{Do: "create", Path: filepath.Join(home, ".local", "bin", "vi")},
		{Do: "remount", Path: optBin},
		{Do: "bind", Path: home, To: "/tmp/home", File: ".bashrc"},
		{Do: "bindrec", Path: home, To: "/tmp/home-rec", File: ".bashrc"},
	}
}

// lastPart is an error's message without the paths before it.
func lastPart(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// runPlant runs ops in an isolated command with hide and readOnly; nested,
// from a user and mount namespace the command makes.
func runPlant(t *testing.T, ops []plantOp, hide, readOnly []string, nested bool) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(ops)
	own := map[string]string{roleEnv: "plant", argsEnv: string(args)}
	if nested {
		own[nestedEnv] = "1"
	}
	env := sandbox.Environ(os.Environ(), own)
	out, err := sandbox.Command(sandbox.Spec{Args: []string{exe}, Env: env, Hide: hide, ReadOnly: readOnly}).Output()
	if err != nil {
		t.Fatalf("isolated command: %v\n%s", err, stderrOf(err))
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(ops) {
		t.Fatalf("report %q: %v", out, err)
	}
	return got
}

// snapshot is every path under root, with a file's content or a link's
// target.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			out[rel], err = os.Readlink(p)
		case d.Type().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			out[rel] = string(b)
		default:
			out[rel] = "folder"
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// without is m without keys.
func without(m map[string]string, keys ...string) map[string]string {
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func mustLink(t *testing.T, to, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, link); err != nil {
		t.Fatal(err)
	}
}

// TestProbeReadOnly: the probe finds every existing read-only path
// unwritable from inside, files, folders and links to them, and skips
// those that do not exist and one that leads to a hidden path (hidden, not
// read-only: its cover takes writes).
func TestProbeReadOnly(t *testing.T) {
	needSandbox(t)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, ".bashrc"), "rc")
	mustWrite(t, filepath.Join(dir, "bin", "tool"), "#!/bin/sh")
	mustLink(t, ".bashrc", filepath.Join(dir, ".profile"))
	mustWrite(t, filepath.Join(dir, "dotfiles", "gitconfig"), "[core]")
	mustLink(t, "dotfiles/gitconfig", filepath.Join(dir, ".gitconfig"))
	ro := []string{filepath.Join(dir, ".bashrc"), filepath.Join(dir, "bin"), filepath.Join(dir, ".profile"), filepath.Join(dir, ".zshrc"),
		filepath.Join(dir, ".gitconfig")}
	if err := sandbox.Probe([]string{filepath.Join(dir, "dotfiles", "gitconfig")}, ro); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".zshrc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the probe made %s: %v", filepath.Join(dir, ".zshrc"), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 5 {
		t.Errorf("the folder holds %d entries after the probe; want 5", len(ents))
	}
}
