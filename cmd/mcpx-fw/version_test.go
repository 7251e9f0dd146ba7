package main

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestVersionGoRunForm: a build that records no commit (go run, or
// -buildvcs=false) says "(devel)", that no commit was recorded and why, and
// the Go version; version and --version print the same.
func TestVersionGoRunForm(t *testing.T) {
	out := versionOutput(t, buildForVersion(t, "-buildvcs=false"))
	want := "mcpx-fw (devel)\n" +
		"revision: not recorded (go run, a linked git worktree and -buildvcs=false, which go env GOFLAGS may hold, record none; " +
		"go install -buildvcs=true ./cmd/mcpx-fw in a git clone records it)\n" +
		"go: " + goruntime.Version() + " " + goruntime.GOOS + "/" + goruntime.GOARCH + "\n"
	if out != want {
		t.Errorf("version printed\n%s\nwant\n%s", out, want)
	}
}

// TestVersionGoBuildForm: a go build as a user runs it (-buildvcs=auto, the
// default) prints the module version and commit the go command recorded,
// and whether the tree was modified. In a git clone with git installed the
// commit is HEAD; a git worktree records none (the go command looks for a
// .git folder), and then the output still says exactly what was recorded.
func TestVersionGoBuildForm(t *testing.T) {
	bin := buildForVersion(t, "-buildvcs=auto")
	rec := recordedBuild(t, bin)
	if head, ok := cloneHead(t); ok && rec.revision != head {
		t.Fatalf("built in a git clone at %s, the build info records revision %q", head, rec.revision)
	}
	out := versionOutput(t, bin)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "mcpx-fw "+rec.version || lines[len(lines)-1] != "go: "+goruntime.Version()+" "+goruntime.GOOS+"/"+goruntime.GOARCH {
		t.Errorf("version printed\n%s\nwant the first line to name %q and the last the Go version", out, rec.version)
	}
	if rec.revision == "" {
		t.Logf("no commit recorded (not a git clone, or git missing): only the version and Go lines were checked:\n%s", out)
		return
	}
	wantRev := "revision: " + rec.revision
	if rec.modified {
		wantRev += " (modified: built with uncommitted changes)"
	}
	if want := []string{lines[0], wantRev, "committed: " + rec.time, lines[len(lines)-1]}; strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("version printed\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
}

// TestVersionBuildVCSOverGOFLAGS: what README and version --help tell a
// user whose go env -w set GOFLAGS=-buildvcs=false: in a git clone, an
// empty GOFLAGS= in front of go build still records no commit, and
// -buildvcs=true on the command line records HEAD, which version prints.
// The go command's settings are the test's own (GOENV), never the
// machine's. Outside a clone (a linked worktree, an unpacked archive)
// there is no commit to record, and it skips.
func TestVersionBuildVCSOverGOFLAGS(t *testing.T) {
	head, ok := cloneHead(t)
	if !ok {
		t.Skip("not a git clone with git on PATH: there is no commit to record")
	}
	goenv := filepath.Join(t.TempDir(), "go.env")
	if err := os.WriteFile(goenv, []byte("GOFLAGS=-buildvcs=false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOENV", goenv)
	t.Setenv("GOFLAGS", "")
	if rec := recordedBuild(t, buildForVersion(t)); rec.revision != "" {
		t.Errorf("GOFLAGS= over go env -w's -buildvcs=false recorded revision %q; README says it records none", rec.revision)
	}
	bin := buildForVersion(t, "-buildvcs=true")
	if rec := recordedBuild(t, bin); rec.revision != head {
		t.Fatalf("-buildvcs=true over go env -w's -buildvcs=false recorded revision %q, want HEAD %s", rec.revision, head)
	}
	if out := versionOutput(t, bin); !strings.Contains(out, "\nrevision: "+head) {
		t.Errorf("version printed\n%s\nwant the revision %s", out, head)
	}
}

// buildForVersion builds mcpx-fw with the given go build flags into a
// folder of the test's.
func buildForVersion(t *testing.T, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpx-fw")
	if err := goBuild(bin, ".", flags...); err != nil {
		t.Fatal(err)
	}
	return bin
}

// versionOutput runs `version` and `--version` and returns what they
// printed, which must be the same, on stdout alone.
func versionOutput(t *testing.T, bin string) string {
	t.Helper()
	var outs []string
	for _, arg := range []string{"version", "--version"} {
		cmd := exec.Command(bin, arg)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("mcpx-fw %s: %v, stdout %q, stderr %q", arg, err, out, stderr.String())
		}
		outs = append(outs, string(out))
	}
	if outs[0] != outs[1] {
		t.Fatalf("version printed\n%s\n--version printed\n%s", outs[0], outs[1])
	}
	return outs[0]
}

// recorded is what the go command wrote into a binary's build info.
type recorded struct {
	version, revision, time string
	modified                bool
}

func recordedBuild(t *testing.T, bin string) recorded {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	r := recorded{version: info.Main.Version}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			r.revision = s.Value
		case "vcs.time":
			r.time = s.Value
		case "vcs.modified":
			r.modified = s.Value == "true"
		}
	}
	return r
}

// cloneHead is the commit checked out, when the repository is a git clone
// (a .git folder, as the go command requires to record one) and git runs.
func cloneHead(t *testing.T) (string, bool) {
	t.Helper()
	if fi, err := os.Stat(repoPath(t, ".git")); err != nil || !fi.IsDir() {
		return "", false
	}
	out, err := exec.Command("git", "-C", repoPath(t, "."), "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}
