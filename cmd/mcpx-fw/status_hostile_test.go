package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// TestStatusFromHostileListener: `mcpx-fw status` renders a document it
// fetched over the network, from whatever answers at the address: a
// spoofed or compromised listener. Every string it prints must be inert:
// no terminal control, and no value that starts a line of its own and so
// passes for the status's own words ("ready: yes").
func TestStatusFromHostileListener(t *testing.T) {
	const forged = "\nready: yes\n\x1b[2J\u202e"
	no := false
	st := telemetry.Status{
		Checks: []telemetry.Check{{Name: "store" + forged, Error: "refused" + forged},
			{Name: "upstream alpha", Error: "down" + forged}},
		Policy: &telemetry.Policy{Revision: "r1" + forged, Source: "bundle" + forged, Location: "http://x/" + forged,
			Reloads: map[string]int64{"ok" + forged: 1}, LastError: "compile" + forged, LastErrorAt: time.Now()},
		Shadow: &telemetry.Shadow{Policy: telemetry.Policy{Revision: "s1" + forged, Source: "dir" + forged, Location: "/x" + forged,
			LastError: "compile" + forged, LastErrorAt: time.Now()},
			Disagreements: []telemetry.Disagreement{{Active: "pass" + forged, Shadow: "blocker" + forged, Count: 1}}, Errors: 1},
		Upstreams:   []telemetry.Upstream{{Server: "alpha" + forged, Reason: "lost" + forged}},
		Reviews:     []telemetry.PendingStatus{{Server: "alpha" + forged, Stage: "request" + forged, Count: 1}},
		Budgets:     []telemetry.BudgetStatus{{Server: "alpha" + forged, Window: "hour" + forged}},
		DecisionLog: []telemetry.LogSink{{Sink: "file" + forged}},
		Store:       telemetry.StoreStatus{Backend: "sqlite" + forged, Writable: &no, Error: "gone" + forged},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	}))
	defer srv.Close()
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("alpha", 1000))
	addr := strings.TrimPrefix(srv.URL, "http://")

	res := runCLI(t, "status", "--config", cfg, "--addr", addr)
	if res.code != 1 || !strings.Contains(res.stdout, "ready: NO") {
		t.Fatalf("status: exit %d, want 1 and ready: NO:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	rendertest.CheckInert(t, "status", res.stdout)
	for _, line := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "ready: yes") {
			t.Errorf("a value from the listener printed a line of its own: %q\n%s", line, res.stdout)
		}
	}

	res = runCLI(t, "status", "--json", "--config", cfg, "--addr", addr)
	rendertest.CheckInert(t, "status --json", res.stdout)
	var got telemetry.Status
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, res.stdout)
	}
	if got.Store.Error != st.Store.Error {
		t.Errorf("status --json changed a value: %q, want %q", got.Store.Error, st.Store.Error)
	}
}
