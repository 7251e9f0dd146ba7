package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHTTPRootsAtSessionStart: npm server-everything asks the host for its
// roots as soon as it is initialized, with no host call in flight, so the
// request can only go on the host's standalone stream. A TypeScript SDK
// host over --http whose stream opens only after that (held 1 s past its
// tools/list, which started the server) is asked all the same, once the
// stream is open, and the server logs no failure.
func TestHTTPRootsAtSessionStart(t *testing.T) {
	t.Parallel()
	node := nodeSetup(t)
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, "  everything:\n"+serverEntry(npmEverythingCommand(t), ""))
	s := startHTTPServe(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, repoPath(t, "testdata/npm/hosthttp.mjs"), "--hold-get-ms", "1000", s.url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	var got struct {
		Tools, RootsAsked int
		Errors            []string
		Error             string
	}
	if jerr := json.Unmarshal(raw, &got); err != nil || jerr != nil {
		t.Fatalf("host: %v, %v: %s\n%s", err, jerr, raw, stderr.String())
	}
	if got.Tools == 0 || got.RootsAsked != 1 {
		t.Errorf("host listed %d tools and was asked for its roots %d times, want tools and once: %s", got.Tools, got.RootsAsked, raw)
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "serve.log"))
	if strings.Contains(string(log), "Failed to request roots") || strings.Contains(string(log), "stream not connected") {
		t.Errorf("server-everything could not get the roots:\n%s", log)
	}
}
