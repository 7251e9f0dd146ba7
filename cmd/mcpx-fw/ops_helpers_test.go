package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcpx-fw/mcpx-fw/engine/review/pgtest"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// opsServe is a running `serve --http` with its ops listener.
type opsServe struct {
	*httpServe
	ops string // http://HOST:PORT of the ops listener
}

// connectHost connects to s an HTTP host that lists tools and answers
// sampling with hostAnswer; the caller closes it.
func (s *opsServe) connectHost(ctx context.Context, t *testing.T) *peer.HTTPHost {
	t.Helper()
	h, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{Answer: answerWith(hostAnswer), Tools: true})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// startOpsServe runs serve --http on cfg with metrics.addr 127.0.0.1:0
// and waits for the line naming the ops listener's address.
func startOpsServe(t *testing.T, cfg string) *opsServe {
	t.Helper()
	s := startHTTPServe(t, cfg)
	var ops string
	waitFor(t, "the ops listening line", func() bool {
		for _, line := range strings.Split(s.output(), "\n") {
			if u, ok := strings.CutPrefix(line, "mcpx-fw: ops listening on "); ok {
				ops = u
				return true
			}
		}
		return false
	})
	return &opsServe{httpServe: s, ops: ops}
}

// opsConfig is testConfig with the ops listener on a free loopback port.
func opsConfig(t *testing.T, policyDir string, servers string) string {
	t.Helper()
	cfg := testConfig(t, policyDir, 10*time.Minute, servers)
	appendConfig(t, cfg, "metrics:\n  addr: 127.0.0.1:0\n")
	return cfg
}

// get fetches base+path and returns the status code and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads /metrics, parses it as Prometheus text and lints it.
func scrape(t *testing.T, ops string) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	code, body := get(t, ops+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d: %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("promlint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	return body, mfs
}

// sample is the value of the series of family name with exactly the given
// labels (a counter, gauge or untyped value; a histogram's count); -1
// when there is none.
func sample(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	mf := mfs[name]
	if mf == nil {
		return -1
	}
	for _, m := range mf.GetMetric() {
		if !sameLabels(m.GetLabel(), labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
		return m.GetUntyped().GetValue()
	}
	return -1
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}

// promtool finds promtool (github.com/prometheus/prometheus/cmd/promtool,
// which .ci/run installs) on PATH or in $(go env GOPATH)/bin. Without it
// the test fails where CI is set and skips otherwise, as the PostgreSQL
// tests do.
func promtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "promtool")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	const install = "go install github.com/prometheus/prometheus/cmd/promtool@v0.316.0"
	if pgtest.InCI() {
		t.Fatalf("promtool not found (CI is set, so this fails); install it with: %s", install)
	}
	t.Skipf("promtool not found; install it with: %s", install)
	return ""
}

// promtoolCheck runs `promtool check metrics` on an exposition.
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}

// status runs `mcpx-fw status --json` and decodes what it printed.
func statusJSON(t *testing.T, cfg, ops string) (telemetry.Status, cliResult) {
	t.Helper()
	res := runCLI(t, "status", "--json", "--config", cfg, "--addr", strings.TrimPrefix(ops, "http://"))
	var st telemetry.Status
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s\n%s", err, res.stdout, res.stderr)
	}
	return st, res
}

// killProcess ends pid with SIGKILL, as a crash would.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
