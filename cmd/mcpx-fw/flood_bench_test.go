package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// BenchmarkServeFlood is P6: serve under the flood of TestFloodIsBounded
// (one upstream pushes 240 requests of 256 KiB at once, half held for
// review, with floodLimits), while a second upstream asks for a completion
// that is held for review and approved. It reports serve's VmRSS idle and
// at its peak (VmHWM) against the bound GOMEMLIMIT + the bytes the two
// servers may hold + floodRSSSlack, how long the refused requests took to
// be answered as the flooding upstream saw it (p50, p99), and how long the
// second upstream's request took to reach the review queue under the
// flood. Run it with -benchtime 1x: each iteration starts a serve.
func BenchmarkServeFlood(b *testing.B) {
	var f floodFigures
	for b.Loop() {
		f = measureFlood(b)
	}
	b.ReportMetric(f.idle, "idle-MiB")
	b.ReportMetric(f.peak, "peak-MiB")
	b.ReportMetric(float64(floodMemoryLimit+2*floodHeldBytes+floodRSSSlack)/(1<<20), "bound-MiB")
	b.ReportMetric(f.refusedP50, "refused-p50-ms")
	b.ReportMetric(f.refusedP99, "refused-p99-ms")
	b.ReportMetric(float64(f.refused), "refused")
	b.ReportMetric(f.goodHeld, "good-held-ms")
}

type floodFigures struct {
	idle, peak             float64 // MiB
	refusedP50, refusedP99 float64 // ms
	refused                int
	goodHeld               float64 // ms
}

func measureFlood(b *testing.B) floodFigures {
	dir := b.TempDir()
	peerLog := filepath.Join(dir, "outcomes.jsonl")
	policies, err := filepath.Abs("../../policies")
	if err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(dir, "mcpx-fw.yaml")
	body := fmt.Sprintf("state_dir: %q\npolicy: {dir: %q}\nreview: {timeout: 10m}\nservers:\n%s%sdecision_log: {sink: %q}\nlog: {file: %q}\n%s",
		filepath.Join(dir, "state"), policies, loadPeerServer("flood", peerLog), loadPeerServer("good", peerLog),
		filepath.Join(dir, "decisions.jsonl"), filepath.Join(dir, "serve.log"), floodLimits)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, Answer: answerWith(hostAnswer)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if _, err := h.ToolNames(ctx); err != nil {
		b.Fatal(err)
	}
	st, err := review.Open(filepath.Join(dir, "state"), zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var f floodFigures
	f.idle = vmRSS(b, h.PID())

	flooded := make(chan floodResult, 1)
	go func() { flooded <- flood(ctx, h) }()
	pendingOf := func(server string) []review.Item {
		items, err := st.List(ctx, review.Filter{Server: server})
		if err != nil {
			b.Fatal(err)
		}
		return items
	}
	until(b, func() bool {
		return len(pendingOf("flood")) == floodReviews && lineCount(peerLog) == 2*floodEach-floodReviews
	})

	start := time.Now()
	good := make(chan error, 1)
	go func() { good <- sampleGood(ctx, h) }()
	until(b, func() bool { return len(pendingOf("good")) == 1 })
	f.goodHeld = float64(time.Since(start).Microseconds()) / 1000
	if _, err := st.Approve(ctx, pendingOf("good")[0].ID, "bench", ""); err != nil {
		b.Fatal(err)
	}
	if err := <-good; err != nil {
		b.Fatal(err)
	}
	for _, it := range pendingOf("flood") {
		if _, err := st.Reject(ctx, it.ID, "bench", ""); err != nil {
			b.Fatal(err)
		}
	}
	res := <-flooded
	if res.err != nil {
		b.Fatal(res.err)
	}
	f.peak = float64(statusField(mustRead(b, fmt.Sprintf("/proc/%d/status", h.PID())), "VmHWM")) / (1 << 20)
	var ms []int64
	for i, o := range res.out.Outcomes {
		if o.Error != nil && strings.HasPrefix(o.Error.Message, "limits.max_") {
			ms = append(ms, res.out.Millis[i])
		}
	}
	slices.Sort(ms)
	if len(ms) == 0 {
		b.Fatal("nothing was refused")
	}
	f.refused = len(ms)
	f.refusedP50, f.refusedP99 = float64(ms[len(ms)/2]), float64(ms[(len(ms)*99)/100])
	return f
}

// until polls cond every 20 ms for up to two minutes.
func until(b *testing.B, cond func() bool) {
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the flood did not come to its expected state in two minutes")
		}
	}
}

func mustRead(b *testing.B, path string) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
