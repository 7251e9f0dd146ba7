package sandbox_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// TestOperatorPaths: the entry points that exist in the home and the
// config home (~/.config, and $XDG_CONFIG_HOME where it is elsewhere) are
// kept read-only, with the PATH folders the user can write, inside the home
// or not; an entry point or PATH folder that does not exist, a relative
// PATH folder and one holding the home are named as unguarded, with why;
// a folder of PATH an isolated command has its own of (/tmp) is neither.
func TestOperatorPaths(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	xdg := filepath.Join(root, "xdg")
	optBin := filepath.Join(root, "opt", "bin")
	for _, p := range []string{filepath.Join(home, ".bashrc"), filepath.Join(home, ".config", "nvim", "init.lua"),
		filepath.Join(home, ".local", "bin", "tool"), filepath.Join(xdg, "git", "config"), filepath.Join(optBin, "tool"),
		filepath.Join(root, "extra", "file")} {
		mustWrite(t, p, "x")
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("XDG_DATA_HOME", "")
	missingBin := filepath.Join(home, "bin")
	t.Setenv("PATH", strings.Join([]string{filepath.Join(home, ".local", "bin"), "node_modules/.bin", "", home, optBin,
		"/tmp", missingBin, optBin + "/"}, string(os.PathListSeparator)))
	ro, unguarded := sandbox.OperatorPaths([]string{filepath.Join(root, "extra"), filepath.Join(root, "extra", "missing")})

	wantRO := []string{filepath.Join(home, ".bashrc"), filepath.Join(home, ".local", "bin"), filepath.Join(home, ".config", "nvim"),
		filepath.Join(xdg, "git"), filepath.Join(root, "extra"), optBin}
	if !slices.Equal(ro, wantRO) {
		t.Errorf("read-only %q; want %q", ro, wantRO)
	}
	why := map[string]string{}
	for _, u := range unguarded {
		why[u.Path] = u.Why
	}
	for p, want := range map[string]string{
		filepath.Join(home, ".bash_profile"): sandbox.WhyMissing, filepath.Join(home, ".vimrc"): sandbox.WhyMissing,
		filepath.Join(home, ".config", "git"): sandbox.WhyMissing, filepath.Join(xdg, "nvim"): sandbox.WhyMissing, filepath.Join(home, ".claude.json"): sandbox.WhyMissing,
		filepath.Join(root, "extra", "missing"): sandbox.WhyMissing, missingBin: sandbox.WhyMissing,
		"node_modules/.bin": sandbox.WhyRelativePath, ".": sandbox.WhyRelativePath, home: sandbox.WhyHoldsHome,
	} {
		if why[p] != want {
			t.Errorf("%s: %q; want %q", p, why[p], want)
		}
	}
	for _, p := range append(ro, "/tmp") {
		if _, ok := why[p]; ok {
			t.Errorf("%s named as unguarded (%s)", p, why[p])
		}
	}
}
