package sandbox

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// target is one path to hide, resolved at launch.
type target struct {
	path string
	dir  bool
}

// protection is what protectPaths protects: the paths to hide and to keep
// read-only, resolved, and the symbolic links met on the way to each.
type protection struct {
	hidden, kept []target
	links        []string
}

// resolveProtection resolves the paths to hide and keep read-only. It runs
// before the command's own temporary folders are mounted, while the
// user's are in view: a path given through one (a config named by a link
// in /tmp) leads somewhere outside it that must be covered all the same,
// with the links outside on the way pinned.
func resolveProtection(hide, readOnly []string) protection {
	hidden, hiddenLinks := resolveTargets(hide)
	kept, keptLinks := readOnlyTargets(readOnly, hidden)
	return protection{hidden: hidden, kept: kept, links: compact(append(hiddenLinks, keptLinks...))}
}

// present is p without what the temporary folders took away: what was in
// one, unless in a folder kept there, is not there to protect.
func (p protection) present() protection {
	there := func(t target) bool { _, err := os.Lstat(t.path); return err == nil }
	p.hidden = slices.DeleteFunc(p.hidden, func(t target) bool { return !there(t) })
	p.kept = slices.DeleteFunc(p.kept, func(t target) bool { return !there(t) })
	p.links = slices.DeleteFunc(p.links, func(l string) bool { fi, err := os.Lstat(l); return err != nil || fi.Mode()&os.ModeSymlink == 0 })
	return p
}

// protectPaths pins the folders above every path to hide or keep
// read-only, and the symbolic links met on the way to each (a config given
// by a link must not be pointed elsewhere); binds each read-only path onto
// itself, read-only; then covers each path to hide. The pins come first,
// so each copies only the few mounts already there; the covers last, so a
// path to hide inside a read-only folder is covered all the same.
func protectPaths(p protection) error {
	hidden, kept, links := p.hidden, p.kept, p.links
	for _, dir := range ancestors(append(append(pathsOf(hidden), pathsOf(kept)...), links...)) {
		if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("pin %s: %w", dir, err)
		}
	}
	for _, link := range links {
		if err := pinLink(link); err != nil {
			return err
		}
	}
	for _, t := range kept {
		if err := bindReadOnly(t); err != nil {
			return err
		}
	}
	for _, t := range hidden {
		if err := cover(t); err != nil {
			return err
		}
	}
	return nil
}

func pathsOf(targets []target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.path
	}
	return out
}

// resolveTargets resolves symbolic links (a mount lands on what a link
// points to), drops paths that do not exist (nothing there to reach) and
// those inside a folder already hidden, and sorts what is left. It returns
// too the links met on the way, but those inside a hidden folder (covered,
// they are not there).
func resolveTargets(hide []string) ([]target, []string) {
	var out []target
	var links []string
	for _, p := range hide {
		real, met, err := walk(p)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil {
			continue
		}
		out = append(out, target{path: real, dir: fi.IsDir()})
		links = append(links, met...)
	}
	slices.SortFunc(out, func(a, b target) int { return strings.Compare(a.path, b.path) })
	kept := out[:0]
	for _, t := range out {
		if !slices.ContainsFunc(kept, func(k target) bool { return k.path == t.path || (k.dir && within(t.path, k.path)) }) {
			kept = append(kept, t)
		}
	}
	return kept, slices.DeleteFunc(links, func(l string) bool { return isHidden(l, kept) })
}

// ancestors are the folders above the paths, "/" excepted, outermost
// first. Each becomes a mount point of its own (bound onto itself,
// recursively, so nothing below it changes), and a mount point cannot be
// renamed or removed: without this, the command could rename a folder
// above the state dir and put a forged queue in its place, which serve and
// the review CLI would open by name, or move ~/.config aside and write a
// ~/.config/nvim of its own.
func ancestors(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		for dir := filepath.Dir(p); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
			if !seen[dir] {
				seen[dir] = true
				out = append(out, dir)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(strings.Count(a, "/"), strings.Count(b, "/")), strings.Compare(a, b))
	})
	return out
}

// cover hides one path: a folder under an empty read-only tmpfs, a file
// (or anything else) under /dev/null, which reads as empty and swallows
// writes.
func cover(t target) error {
	var err error
	if t.dir {
		err = unix.Mount("tmpfs", t.path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0555,size=4k")
	} else {
		err = unix.Mount(os.DevNull, t.path, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("hide %s: %w", t.path, err)
	}
	return nil
}

// freshProc mounts a /proc of the launcher's PID namespace over the one
// inherited, so /proc/<pid> of serve and of every other process of the
// account (their root, cwd, fd and environ) is out of reach; and covers any
// other procfs mounted elsewhere, which would show the old namespace.
func freshProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount a fresh /proc: %w", err)
	}
	others, err := otherProcMounts()
	if err != nil {
		return err
	}
	for _, p := range others {
		if err := cover(target{path: p, dir: true}); err != nil {
			return err
		}
	}
	return nil
}

// otherProcMounts lists procfs mount points other than /proc, from
// mountinfo (mount point is the fifth field, the type follows " - ").
func otherProcMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fields, rest, ok := strings.Cut(sc.Text(), " - ")
		f := strings.Fields(fields)
		if !ok || len(f) < 5 || !strings.HasPrefix(rest, "proc ") {
			continue
		}
		if p := unescapeMountPath(f[4]); p != "/proc" && !within(p, "/proc") && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, sc.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
