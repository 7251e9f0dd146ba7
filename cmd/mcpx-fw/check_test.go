package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckPrintsOnlyItsReport: with the service log on stderr (no
// log.file), check prints its report and no log line; with log.file set,
// its logs go there.
func TestCheckPrintsOnlyItsReport(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", "state_dir: "+filepath.Join(dir, "state")+"\npolicy:\n  dir: "+
		repoPath(t, "policies")+"\nservers:\n"+peerServer("peer", 0))
	res := runCLI(t, "check", "--config", cfg)
	if res.code != 0 || res.stderr != "" || !strings.HasPrefix(res.stdout, "ok: 1 server(s)") || strings.Contains(res.stdout, `{"level"`) {
		t.Errorf("check: exit %d, stdout %q, stderr %q; want the report alone", res.code, res.stdout, res.stderr)
	}
	logged := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	res = runCLI(t, "check", "--config", logged)
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(logged), "serve.log"))
	if res.code != 0 || res.stderr != "" || !strings.Contains(string(log), `"msg":"policy loaded"`) {
		t.Errorf("check with log.file: exit %d, stderr %q, log %q; want the logs in log.file", res.code, res.stderr, log)
	}
}

// TestCheckCreatesNoStore: check against a state dir that does not exist
// leaves it so, and says serve will create the review store; against an
// existing store it says nothing of the kind.
func TestCheckCreatesNoStore(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	state := filepath.Join(filepath.Dir(cfg), "state")
	res := runCLI(t, "check", "--config", cfg)
	want := "review store: " + filepath.Join(state, "reviews.db") + " does not exist yet; serve will create it"
	if res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Errorf("check: exit %d, stdout %q, stderr %q; want %q", res.code, res.stdout, res.stderr, want)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("check made the state dir %s (%v)", state, err)
	}
	openStore(t, cfg).Close()
	res = runCLI(t, "check", "--config", cfg)
	if res.code != 0 || strings.Contains(res.stdout, "does not exist yet") {
		t.Errorf("check of an existing store: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}
