package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sharedTemp are the folders an isolated upstream has its own of (see
// relay/sandbox): a file a test puts there for its upstream to read or
// write (a log, say) would never reach it.
var sharedTemp = []string{"/tmp/", "/var/tmp/", "/dev/shm/"}

// useVisibleTemp points TMPDIR, for the tests and every process they start,
// at a new folder of the user's cache: the folders and binaries the tests
// make (t.TempDir, os.MkdirTemp) are then where an isolated upstream sees
// them, as a user's TMPDIR outside /tmp is. It returns the folder, to
// remove when the tests are done.
func useVisibleTemp() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("a temporary folder outside /tmp: %w", err)
	}
	base = filepath.Join(base, "mcpx-fw-test")
	if slices.ContainsFunc(sharedTemp, func(p string) bool { return strings.HasPrefix(base, p) }) {
		return "", fmt.Errorf("%s is in a folder isolated upstreams have their own of: set XDG_CACHE_HOME elsewhere", base)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(base, "cmd-")
	if err != nil {
		return "", err
	}
	return dir, os.Setenv("TMPDIR", dir)
}
