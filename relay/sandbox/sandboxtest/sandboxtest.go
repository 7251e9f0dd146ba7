// Package sandboxtest gives the tests that start isolated commands a
// temporary folder such a command sees. It imports only the standard
// library, and only tests import it.
package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// privateTemp are the folders an isolated command has its own of (see
// relay/sandbox): a file a test puts there for its command to read or
// write would never reach it.
var privateTemp = []string{"/tmp/", "/var/tmp/", "/dev/shm/"}

// VisibleTemp points TMPDIR, for the test binary and every process it
// starts, at a new folder named prefix and a random part, in the user's
// cache: the folders and files the tests make (t.TempDir, os.MkdirTemp)
// are then where an isolated command sees them, as a user's TMPDIR outside
// /tmp is. It returns the folder, for the caller to remove when its tests
// are done.
func VisibleTemp(prefix string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("a temporary folder outside /tmp: %w", err)
	}
	base = filepath.Join(base, "mcpx-fw-test")
	if slices.ContainsFunc(privateTemp, func(p string) bool { return strings.HasPrefix(base, p) }) {
		return "", fmt.Errorf("%s is in a folder isolated commands have their own of: set XDG_CACHE_HOME elsewhere", base)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(base, prefix)
	if err != nil {
		return "", err
	}
	return dir, os.Setenv("TMPDIR", dir)
}
