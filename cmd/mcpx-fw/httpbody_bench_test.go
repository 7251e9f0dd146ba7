package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// BenchmarkHTTPUpstreamAnswerMemory: serve's memory for one large
// application/json answer from an HTTP upstream (hostileUpstream), relayed
// to a stdio host: VmRSS idle, and VmHWM once the call has ended, for an
// answer of 12 MiB (relayed) and of 96 MiB (refused past the 16 MiB
// bound), chunked and with Content-Length. Run it with -benchtime 1x: each
// iteration starts a serve.
func BenchmarkHTTPUpstreamAnswerMemory(b *testing.B) {
	up, endpoint := newHostileUpstream(b)
	for _, size := range []int{12 << 20, 96 << 20} {
		for _, kind := range []string{"size", "declared"} {
			b.Run(fmt.Sprintf("%dMiB-%s", size>>20, kind), func(b *testing.B) {
				var idle, peak float64
				for b.Loop() {
					idle, peak = answerMemory(b, up, endpoint, kind+":"+strconv.Itoa(size))
				}
				b.ReportMetric(idle, "idle-MiB")
				b.ReportMetric(peak, "peak-MiB")
				b.ReportMetric(peak-idle, "peak-over-idle-MiB")
			})
		}
	}
}

// answerMemory starts serve with endpoint as its one server, calls echo
// with text once, and returns serve's VmRSS before the call and its VmHWM
// after, in MiB.
func answerMemory(b *testing.B, up *hostileUpstream, endpoint, text string) (idle, peak float64) {
	dir := b.TempDir()
	policies, err := filepath.Abs("../../policies")
	if err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(dir, "mcpx-fw.yaml")
	body := fmt.Sprintf("state_dir: %q\npolicy: {dir: %q}\nservers:\n  peer:\n    url: %s\ndecision_log: {sink: %q}\nlog: {file: %q}\n",
		filepath.Join(dir, "state"), policies, endpoint, filepath.Join(dir, "decisions.jsonl"), filepath.Join(dir, "serve.log"))
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
	idle = vmRSS(b, h.PID())
	// VmHWM from here on: start-up's own peak is not the answer's.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", h.PID()), []byte("5"), 0); err != nil {
		b.Fatal(err)
	}
	res, err := h.CallTool(ctx, "echo", map[string]any{"text": text})
	<-up.written
	peak = float64(statusField(mustRead(b, fmt.Sprintf("/proc/%d/status", h.PID())), "VmHWM")) / (1 << 20)
	if err != nil {
		b.Logf("%s: refused: %v", text, err)
	} else {
		b.Logf("%s: relayed %d bytes of text", text, len(res.Text))
	}
	return idle, peak
}
