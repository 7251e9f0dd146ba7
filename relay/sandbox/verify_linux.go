package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// verify is the probe's check, run where an upstream's command would run:
// every path of hide that exists must show nothing and take nothing, every
// path of readOnly that exists must take nothing, and none must come off;
// /proc must be the launcher's PID namespace's. It prints each problem and
// returns 1 if there is one.
func verify(hide, readOnly []string) int {
	var problems []error
	for _, p := range hide {
		problems = append(problems, hidden(p))
	}
	for _, p := range readOnly {
		if !underCover(p, hide) {
			problems = append(problems, readOnlyHere(p))
		}
	}
	if cmdline, err := os.ReadFile("/proc/1/cmdline"); err != nil || !bytes.HasPrefix(cmdline, []byte(launcherArg+"\x00")) {
		problems = append(problems, errors.New("/proc is not the sandbox's own"))
	}
	if err := errors.Join(problems...); err != nil {
		fmt.Fprintln(os.Stderr, "mcpx-fw launcher: check:", err)
		return 1
	}
	return 0
}

// hidden checks one path from inside.
func hidden(p string) error {
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil // did not exist at launch either: nothing to hide
	}
	if err != nil {
		return nil // unreachable is hidden
	}
	if fi.IsDir() {
		if ents, _ := os.ReadDir(p); len(ents) > 0 {
			return fmt.Errorf("%s still shows %d entries", p, len(ents))
		}
		if err := os.WriteFile(filepath.Join(p, ".mcpx-fw-probe"), nil, 0o600); err == nil {
			return fmt.Errorf("%s takes new files", p)
		}
	} else if b, _ := os.ReadFile(p); len(b) > 0 {
		return fmt.Errorf("%s can still be read", p)
	}
	if err := unix.Unmount(p, unix.MNT_DETACH); err == nil {
		return fmt.Errorf("%s can be unmounted", p)
	}
	return nil
}

// readOnlyHere checks one read-only path from inside: access(2) must
// refuse a write (it reports a read-only mount without writing), and
// neither an unmount nor a remount that drops read-only may work.
func readOnlyHere(p string) error {
	if _, err := os.Stat(p); err != nil {
		return nil // did not exist at launch either: nothing to keep
	}
	if unix.Access(p, unix.W_OK) == nil {
		return fmt.Errorf("%s can still be written", p)
	}
	if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT, ""); err == nil {
		return fmt.Errorf("%s can be remounted writable", p)
	}
	if err := unix.Unmount(p, unix.MNT_DETACH); err == nil {
		return fmt.Errorf("%s can be unmounted", p)
	}
	return nil
}

// underCover reports whether p leads to a hidden path or into one: it was
// hidden rather than kept read-only (a /dev/null cover takes writes).
func underCover(p string, hide []string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(hide, func(h string) bool {
		h, err := filepath.EvalSymlinks(h)
		return err == nil && (real == h || within(real, h))
	})
}
