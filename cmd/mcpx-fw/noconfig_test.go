package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckAndServeNeedAConfig: with no config file named and none in the
// working folder, check and serve say how to give one, in one line, exit
// 2 and create nothing (no state dir, no store); with mcpx-fw.yaml in the
// working folder they read it.
func TestCheckAndServeNeedAConfig(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	env := []string{"XDG_STATE_HOME=" + home, "HOME=" + home}
	want := "mcpx-fw: no config file: give --config FILE, set MCPXFW_CONFIG, or put mcpx-fw.yaml in " + dir + "\n"
	for _, sub := range []string{"check", "serve"} {
		res := runBare(t, dir, env, sub)
		if res.code != exitUsage || res.stderr != want || res.stdout != "" {
			t.Errorf("%s with no config: exit %d, stdout %q, stderr %q; want 2 and %q", sub, res.code, res.stdout, res.stderr, want)
		}
	}
	for _, d := range []string{dir, home} {
		if left, _ := os.ReadDir(d); len(left) > 0 {
			t.Errorf("check and serve with no config left %s in %s", left[0].Name(), d)
		}
	}
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "mcpx-fw.yaml", string(b))
	if res := runBare(t, dir, env, "check"); res.code != 0 || !strings.HasPrefix(res.stdout, "ok: 1 server(s)") {
		t.Errorf("check with mcpx-fw.yaml in the working folder: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestMissingConfigNamesWhatNamedIt: a config file that is not there is
// named with what named it (--config or MCPXFW_CONFIG) and, when it is
// relative, the folder it was looked for in, for every command.
func TestMissingConfigNamesWhatNamedIt(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(dir, "nope.yaml")
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"MCPXFW_CONFIG=home/cfg/mcpx-fw.yaml"}, []string{"check"},
			"MCPXFW_CONFIG=home/cfg/mcpx-fw.yaml: no such file (relative to " + dir + ")"},
		{nil, []string{"serve", "--config", "home/cfg/mcpx-fw.yaml"}, "--config home/cfg/mcpx-fw.yaml: no such file (relative to " + dir + ")"},
		{[]string{"MCPXFW_CONFIG=" + abs}, []string{"review", "list"}, "MCPXFW_CONFIG=" + abs + ": no such file"},
		{[]string{"MCPXFW_CONFIG=x.yaml"}, []string{"review", "reject", "rv-0000000000000000", "--config", abs}, "--config " + abs + ": no such file"},
	} {
		res := runBare(t, dir, tc.env, tc.args...)
		if res.code != exitFailure || res.stderr != "mcpx-fw: "+tc.want+"\n" {
			t.Errorf("%v %v: exit %d, stderr %q; want 1 and %q", tc.env, tc.args, res.code, res.stderr, tc.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("a missing config left %s in the working folder", left[0].Name())
	}
}
