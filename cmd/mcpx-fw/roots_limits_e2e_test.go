package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// The roots flood: rootsFlood roots/list requests pushed at once by one
// upstream, at a host that holds every one it gets. Under the default
// limits a stdio host's share, limits.max_in_flight_per_host (24), binds
// before the server's limits.max_in_flight (48).
const (
	rootsFlood     = 20000
	rootsHostLimit = 24
	rootsRefusal   = "limits.max_in_flight_per_host (24) reached for server flood in this host session"
)

// TestRootsFloodRefused: an upstream (serve's one, so its tools keep their
// names) that pushes 20,000 roots/list
// requests at once gets 24 of them to the host, which holds them, and
// every other one refused at once, while those 24 still wait, with the
// limit's -32603 (data limit-reached), as a flood of sampling requests is;
// the refusals are counted and logged in fewer lines than refusals. serve's
// resident memory stays within its memory limit plus floodRSSSlack: a
// roots request holds a few bytes, so the limits allow it next to nothing.
func TestRootsFloodRefused(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("reads serve's memory from /proc:", err)
	}
	peerLog := filepath.Join(t.TempDir(), "outcomes.jsonl")
	server := fmt.Sprintf("  flood:\n    command: [%q]\n    label: Test peer flood\n    max_tokens: 1000\n    env: {%s: \"1\", MCPXFW_PEER_LOG: %q}\n",
		upstreamBinary, peer.LoadEnv, peerLog)
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, server)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	release := make(chan struct{})
	host, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg},
		Roots: []string{"file:///work"}, HoldRoots: release})
	if err != nil {
		t.Fatalf("start serve: %v", err)
	}
	t.Cleanup(func() { _ = host.Close() })
	before := readProcStatus(t, host.PID())

	flooded := make(chan floodTally, 1)
	go func() { flooded <- floodRoots(ctx, host) }()
	start := time.Now()
	for refused := 0; refused < rootsFlood-rootsHostLimit || host.RootsAsked() < rootsHostLimit; refused = lineCount(peerLog) {
		if n := host.RootsAsked(); n > rootsHostLimit {
			t.Fatalf("%d roots requests reached the host, past limits.max_in_flight_per_host (%d)", n, rootsHostLimit)
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("after 2 minutes: %d refusals, %d requests at the host; want %d and %d", refused, host.RootsAsked(), rootsFlood-rootsHostLimit, rootsHostLimit)
		}
		select {
		case res := <-flooded:
			t.Fatalf("the flood ended while the host held every request it got: %+v", res)
		case <-time.After(20 * time.Millisecond):
		}
	}
	refusedIn := time.Since(start)
	checkRootsRefusals(t, peerLog)
	close(release)
	res := <-flooded
	after := readProcStatus(t, host.PID())
	if res.err != nil {
		t.Fatal(res.err)
	}
	refused, _ := json.Marshal(res.Refused)
	t.Logf("%d roots requests: %d answered, refused %s; every refusal within %v, while the host held %d",
		rootsFlood, res.Answered, refused, refusedIn.Round(time.Millisecond), rootsHostLimit)
	if res.Answered != rootsHostLimit || len(res.Refused) != 1 || res.Refused[0].Count != rootsFlood-rootsHostLimit {
		t.Errorf("the upstream got %d lists and %s; want %d lists and %d refusals", res.Answered, refused, rootsHostLimit, rootsFlood-rootsHostLimit)
	}
	if n := host.RootsAsked(); n != rootsHostLimit {
		t.Errorf("%d roots requests reached the host, want %d", n, rootsHostLimit)
	}
	budget := int64(serveMemoryLimit + floodRSSSlack)
	t.Logf("serve RSS before the flood %s, peak %s (VmHWM), after %s; allowed %s (GOMEMLIMIT %s + %s slack)",
		mib(before.rss), mib(after.hwm), mib(after.rss), mib(budget), mib(serveMemoryLimit), mib(floodRSSSlack))
	if after.hwm > budget {
		t.Errorf("serve's peak RSS %s is over %s", mib(after.hwm), mib(budget))
	}
	_ = host.Close() // serve logs the refusals not yet counted in a line as it stops
	logPath := filepath.Join(filepath.Dir(cfg), "serve.log")
	checkRefusalsLogged(t, logPath, rootsFlood-rootsHostLimit)
	checkServeLog(t, logPath)
}

// floodTally is what the flooding upstream's roots requests got.
type floodTally struct {
	peer.RootsTally
	err error
}

func floodRoots(ctx context.Context, host *peer.Host) floodTally {
	res, err := host.CallTool(ctx, "roots_each", map[string]any{"count": rootsFlood})
	if err != nil {
		return floodTally{err: err}
	}
	var out floodTally
	out.err = json.Unmarshal([]byte(res.Text), &out.RootsTally)
	return out
}

// checkRootsRefusals: each outcome the upstream logged before the host
// answered anything is the limit's -32603, data limit-reached.
func checkRootsRefusals(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(b) {
		var o peer.AskOutcome
		if err := json.Unmarshal(line, &o); err != nil || o.Error == nil || o.Error.Code != -32603 ||
			o.Error.Message != rootsRefusal || compactJSON(o.Error.Data) != `{"reason_codes":["limit-reached"]}` {
			t.Fatalf("the upstream got %s; want -32603 %q, data limit-reached", bytes.TrimSpace(line), rootsRefusal)
		}
	}
}

// compactJSON is raw without insignificant whitespace.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
