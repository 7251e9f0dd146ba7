package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoStoreIsNeverCreated: the commands that read the queue (review
// list, show and watch, audit, status, policy replay) and those that decide from it
// (approve, reject, answer, prune, the console) never create a state dir
// or a store: a state dir that holds none, absolute or relative (a
// misspelt MCPXFW_STATE_DIR), is one line naming it, exit 1, and nothing
// is left behind.
func TestNoStoreIsNeverCreated(t *testing.T) {
	const id = "rv-0000000000000000"
	candidate := t.TempDir() // a folder that is there: the store is what is missing
	commands := [][]string{
		{"review", "list"}, {"review", "list", "--json"}, {"review", "show", id}, {"audit"}, {"audit", "--verify"}, {"status"},
		{"review", "approve", id}, {"review", "reject", id}, {"review", "answer", id, "--text", "x"}, {"review", "prune"},
		{"review", "watch", "--count", "1"}, {"console", "--addr", "127.0.0.1:0"},
		{"policy", "replay", "--candidate", candidate},
	}
	for _, stateDir := range []string{filepath.Join(t.TempDir(), "nonexistent-sd"), "rel/sd"} {
		dir := t.TempDir()
		shown, named := stateDir, "MCPXFW_STATE_DIR"
		if !filepath.IsAbs(stateDir) {
			shown, named = filepath.Join(dir, stateDir), "MCPXFW_STATE_DIR="+stateDir
		}
		want := "no review store in " + shown + " (" + named + "): has serve run with this state dir?\n"
		for _, args := range commands {
			res := runBare(t, dir, []string{"MCPXFW_STATE_DIR=" + stateDir}, args...)
			// status says first that there is no serve to ask
			if res.code != exitFailure || !oneLine(res.stderr) || !strings.HasPrefix(res.stderr, "mcpx-fw: ") || !strings.HasSuffix(res.stderr, want) || res.stdout != "" {
				t.Errorf("%v with MCPXFW_STATE_DIR=%s: exit %d, stdout %q, stderr %q; want 1 and %q", args, stateDir, res.code, res.stdout, res.stderr, want)
			}
			if _, err := os.Stat(shown); !os.IsNotExist(err) {
				t.Fatalf("%v created %s", args, shown)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Fatalf("%v left %s in the working folder", args, left[0].Name())
			}
		}
	}
}
