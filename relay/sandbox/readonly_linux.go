package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// readOnlyTargets resolves the paths to keep read-only: each that exists,
// by its real path, with the symbolic links met on the way (~/.bashrc
// leading to ~/dotfiles/bashrc: the link is the user's file as much as
// its target, and replacing it is writing it). Paths inside a hidden one,
// and paths inside a folder already kept read-only, are left out, as are
// links inside a hidden folder (covered, they are not there).
func readOnlyTargets(paths []string, hidden []target) (kept []target, links []string) {
	for _, p := range paths {
		real, met, err := walk(p)
		if err != nil {
			continue // nothing there to keep
		}
		fi, err := os.Stat(real)
		if err != nil || isHidden(real, hidden) {
			continue
		}
		kept = append(kept, target{path: real, dir: fi.IsDir()})
		for _, l := range met {
			if !isHidden(l, hidden) && !slices.Contains(links, l) {
				links = append(links, l)
			}
		}
	}
	slices.SortFunc(kept, func(a, b target) int { return strings.Compare(a.path, b.path) })
	out := kept[:0]
	for _, t := range kept {
		if !slices.ContainsFunc(out, func(k target) bool { return k.path == t.path || (k.dir && within(t.path, k.path)) }) {
			out = append(out, t)
		}
	}
	return out, links
}

// isHidden reports whether p is a hidden path or inside a hidden folder.
func isHidden(p string, hidden []target) bool {
	return slices.ContainsFunc(hidden, func(h target) bool { return h.path == p || (h.dir && within(p, h.path)) })
}

// maxLinks bounds the symbolic links walk follows, as the kernel's
// ELOOP does.
const maxLinks = 40

// walk resolves the absolute path p as the kernel does, and returns the
// real path with every symbolic link met on the way, each by the path it
// was met at (whose folder is real).
func walk(p string) (real string, links []string, err error) {
	if !filepath.IsAbs(p) {
		return "", nil, fmt.Errorf("%s: not absolute", p)
	}
	done, rest := "/", strings.Split(p, "/")
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		if len(links) == maxLinks {
			return "", nil, &os.PathError{Op: "walk", Path: p, Err: syscall.ELOOP}
		}
		to, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		links = append(links, next)
		if filepath.IsAbs(to) {
			done = "/"
		}
		rest = append(strings.Split(to, "/"), rest...)
	}
	return done, links, nil
}

// pinLink makes a symbolic link a mount point (a clone of the link itself,
// moved onto it without following it), so it can be neither removed,
// renamed nor replaced, and still leads where it led. A kernel without
// open_tree (before Linux 5.2) leaves links as they are.
func pinLink(link string) error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, link, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOSYS) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pin the link %s: %w", link, err)
	}
	defer unix.Close(fd)
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, link, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("pin the link %s: %w", link, err)
	}
	return nil
}

// bindReadOnly binds t onto itself, with every mount below it, and makes
// all of them read-only: writes there fail with EROFS, and, as a mount
// point, t cannot be renamed, replaced or removed. A kernel without
// mount_setattr (before Linux 5.12) makes only t's own mount read-only.
func bindReadOnly(t target) error {
	if err := unix.Mount(t.path, t.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("keep %s read-only: %w", t.path, err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	err := unix.MountSetattr(unix.AT_FDCWD, t.path, unix.AT_RECURSIVE, &attr)
	if errors.Is(err, unix.ENOSYS) {
		err = remountReadOnly(t.path)
	}
	if err != nil {
		return fmt.Errorf("keep %s read-only: %w", t.path, err)
	}
	return nil
}

// remountReadOnly remounts the bind mount at p read-only, keeping the
// flags it has: in a user namespace, those its mount was given outside
// (nosuid, nodev, noexec, atime) are locked, and a remount without them
// is refused. statfs reports them with the same values as mount takes.
func remountReadOnly(p string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	const kept = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME
	return unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|uintptr(st.Flags)&kept, "")
}

// Writable reports whether this process can write p, and so could an
// isolated command, running as the same user: access(2) allows it (by the
// permissions, on a mount that is not read-only), and p is not in a folder
// an isolated command has its own of.
func Writable(p string) bool {
	if slices.ContainsFunc(privateFolders, func(dir string) bool { return p == dir || within(p, dir) }) {
		return false
	}
	return unix.Access(p, unix.W_OK) == nil
}
