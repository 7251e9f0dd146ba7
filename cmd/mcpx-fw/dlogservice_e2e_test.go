package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/logship/collector"
)

// dlogCanary is what a hostile upstream writes into its prompt text, its
// system prompt and its tools' names: none of it may leave the process
// while include_content is off.
const dlogCanary = "SHIP-CANARY-7f3a91"

var canaryRequest = `{"messages":[{"role":"user","content":{"type":"text","text":"Say hello. ` + dlogCanary + `"}}],
 "systemPrompt":"` + dlogCanary + `-system","maxTokens":100,
 "tools":[{"name":"` + dlogCanary + `_tool","description":"` + dlogCanary + `","inputSchema":{"type":"object"}}]}`

// withDecisionLogService puts decision_log.service (and include_content)
// into the config testConfig wrote.
func withDecisionLogService(t *testing.T, cfg, url string, delay time.Duration, content bool) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	section := fmt.Sprintf("decision_log:\n  include_content: %v\n  service:\n    url: %s\n    min_delay: %s\n    max_delay: %s\n    headers: {X-Team: sec}\n    credentials: {bearer: {token: \"${MCPXFW_TEST_LOG_TOKEN}\"}}\n",
		content, url, delay, delay)
	b = bytes.Replace(b, []byte("decision_log:\n"), []byte(section), 1)
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fileDecisionIDs are the decision ids in serve's file sink, in order.
func fileDecisionIDs(t *testing.T, cfg string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(filepath.Dir(cfg), "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var ev struct {
			DecisionID string `json:"decision_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("decision log line: %v", err)
		}
		ids = append(ids, ev.DecisionID)
	}
	return ids
}

// shippedIDs counts each decision id the collector received.
func shippedIDs(t *testing.T, col *collector.Collector) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, raw := range col.Events() {
		var ev struct {
			DecisionID string `json:"decision_id"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("shipped event: %v", err)
		}
		out[ev.DecisionID]++
	}
	return out
}

// serve with a service sink, under a mix of permitted, denied, blocked
// and escalated (approved) requests from a peer upstream, ships every
// decision the file sink wrote exactly once, with the bearer token and
// headers configured; masked, no byte of the upstream's canary leaves;
// with content on the canary is there, so the test would see a leak.
// With uploads a minute apart, every event arrives only because stopping
// serve flushes the plugin's buffer.
func TestServeShipsDecisionLogs(t *testing.T) {
	t.Setenv("MCPXFW_TEST_LOG_TOKEN", "tok-123")
	for _, tc := range []struct {
		content bool
		delay   time.Duration
	}{{false, time.Minute}, {true, time.Second}} {
		t.Run(fmt.Sprintf("include_content=%v", tc.content), func(t *testing.T) {
			col := collector.New()
			defer col.Close()
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
			withDecisionLogService(t, cfg, col.URL, tc.delay, tc.content)
			host := startFirewall(t, cfg, answerWith(hostAnswer))
			for _, params := range []string{plainRequest, overCapRequest, danglingRequest, canaryRequest, plainRequest} {
				if _, err := host.Sample(t.Context(), json.RawMessage(params)); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan struct{})
			go func() { defer close(done); approveNext(t, cfg) }()
			if _, err := host.Sample(t.Context(), json.RawMessage(secretRequest)); err != nil {
				t.Fatal(err)
			}
			<-done
			if err := host.Close(); err != nil {
				t.Logf("serve exit: %v", err)
			}
			checkShipped(t, cfg, col, tc.content)
		})
	}
}

func checkShipped(t *testing.T, cfg string, col *collector.Collector, content bool) {
	t.Helper()
	written := fileDecisionIDs(t, cfg)
	if len(written) < 8 {
		t.Fatalf("the file sink holds %d decisions, want at least 8 (requests and results)", len(written))
	}
	shipped := shippedIDs(t, col)
	if got, want := slices.Sorted(maps.Keys(shipped)), slices.Sorted(slices.Values(written)); !slices.Equal(got, want) {
		t.Errorf("shipped decisions %v, file sink's %v", got, want)
	}
	for id, n := range shipped {
		if n != 1 {
			t.Errorf("decision %s shipped %d times", id, n)
		}
	}
	if bad := col.Malformed(); len(bad) > 0 {
		t.Errorf("malformed uploads: %v", bad)
	}
	for _, h := range col.Headers() {
		if h.Get("Authorization") != "Bearer tok-123" || h.Get("X-Team") != "sec" {
			t.Errorf("upload headers %v, want the configured bearer token and X-Team", h)
		}
	}
	if leaked := strings.Contains(string(col.Bytes()), dlogCanary); leaked != content {
		t.Errorf("include_content %v: the collector received the upstream's canary: %v", content, leaked)
	}
	serveLog, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "serve.log"))
	if bytes.Contains(serveLog, []byte(dlogCanary)) || bytes.Contains(serveLog, []byte("tok-123")) {
		t.Error("serve's log holds the canary or the bearer token")
	}
}
