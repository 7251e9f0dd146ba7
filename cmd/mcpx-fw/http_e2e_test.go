package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// httpServe is a running `mcpx-fw serve --http`.
type httpServe struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr bytes.Buffer // everything after the listening line
	done   chan struct{}
}

// startHTTPServe runs `mcpx-fw serve --config cfg --http 127.0.0.1:0` and
// waits for the line that says where it listens.
func startHTTPServe(t *testing.T, cfg string) *httpServe {
	t.Helper()
	s := &httpServe{cmd: exec.Command(binary, "serve", "--config", cfg, "--http", "127.0.0.1:0"), done: make(chan struct{})}
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	found := make(chan string, 1)
	go s.read(pipe, found)
	select {
	case s.url = <-found:
	case <-s.done:
		t.Fatalf("serve --http exited before listening: %s", s.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve --http printed no listening line: %s", s.output())
	}
	return s
}

// read sends the URL of the listening line on found and keeps the rest.
func (s *httpServe) read(pipe io.Reader, found chan<- string) {
	defer close(s.done)
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		if url, ok := strings.CutPrefix(sc.Text(), "mcpx-fw: listening on "); ok {
			found <- url
			continue
		}
		s.mu.Lock()
		s.stderr.WriteString(sc.Text() + "\n")
		s.mu.Unlock()
	}
}

func (s *httpServe) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// TestServeHTTP: one `serve --http` answers a 2025-11-25 host, whose
// upstream pushes sampling, and a 2026-07-28 host, whose upstream asks by
// input request, at once; each upstream session speaks its host's revision
// (so the 2026 host was not downgraded). An interrupt then stops serve
// promptly and cleanly although a legacy host still holds its event stream.
func TestServeHTTP(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	s := startHTTPServe(t, cfg)
	hosts := []struct {
		version, tool string
	}{
		{"2025-11-25", "sample"},
		{"2026-07-28", "sample_input"},
	}
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Go(func() { checkHTTPHost(t, s.url, h.version, h.tool) })
	}
	wg.Wait()
	if t.Failed() {
		t.Logf("serve stderr: %s", s.output())
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	held, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{Answer: answerWith(hostAnswer)})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	start := time.Now()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve --http did not stop within 10s of an interrupt")
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve --http after an interrupt: %v; stderr: %s", err, s.output())
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("serve --http took %v to stop", d)
	}
}

// checkHTTPHost connects a host at version, checks the revision the
// upstream was spoken to in, and samples through tool.
func checkHTTPHost(t *testing.T, url, version, tool string) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	h, err := peer.ConnectHTTP(ctx, url, peer.HostOptions{Answer: answerWith(hostAnswer), ProtocolVersion: version})
	if err != nil {
		t.Errorf("%s host: connect: %v", version, err)
		return
	}
	defer h.Close()
	if got := h.ProtocolVersion(); got != version {
		t.Errorf("%s host: negotiated %s", version, got)
	}
	res, err := h.CallTool(ctx, "client_info", map[string]any{})
	var info peer.ClientInfo
	if err != nil || json.Unmarshal([]byte(res.Text), &info) != nil || info.ProtocolVersion != version {
		t.Errorf("%s host: the upstream was spoken to in %q (%v)", version, info.ProtocolVersion, err)
	}
	res, err = h.CallTool(ctx, tool, map[string]any{"params": json.RawMessage(plainRequest)})
	if err != nil || !strings.Contains(res.Text, "the host's answer") {
		t.Errorf("%s host: %s: %+v, %v", version, tool, res, err)
	}
}

// TestServeHTTPRefusesRemote: an address other machines can reach is
// refused, with one line that says what to do, unless the config allows it.
func TestServeHTTPRefusesRemote(t *testing.T) {
	tests := []struct {
		name, addr string
		code       int
		want       []string
	}{
		{"any interface", "0.0.0.0:0", exitFailure, []string{"0.0.0.0:0", "not a loopback address", "http.allow_remote: true"}},
		{"no host", ":0", exitFailure, []string{"not a loopback address", "http.allow_remote: true"}},
		{"not HOST:PORT", "8080", exitUsage, []string{"not HOST:PORT", "Try: mcpx-fw serve --http 127.0.0.1:8080"}},
	}
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, "serve", "--config", cfg, "--http", tt.addr)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", res.code, tt.code, res.stderr)
			}
			if tt.code == exitFailure && !oneLine(res.stderr) {
				t.Errorf("stderr is not one line: %q", res.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr does not say %q: %s", w, res.stderr)
				}
			}
		})
	}
}

var (
	httpUpstreamOnce sync.Once
	httpUpstreamBin  string
	httpUpstreamErr  error
)

// startHTTPUpstream builds testdata/upstream once and runs it in -http mode
// with extra arguments; it returns the URL the upstream printed.
func startHTTPUpstream(t *testing.T, args ...string) string {
	t.Helper()
	httpUpstreamOnce.Do(func() {
		httpUpstreamBin = binary + "-test-upstream"
		out, err := exec.Command("go", "build", "-o", httpUpstreamBin, "../../testdata/upstream").CombinedOutput()
		if err != nil {
			httpUpstreamErr = fmt.Errorf("build testdata/upstream: %v\n%s", err, out)
		}
	})
	if httpUpstreamErr != nil {
		t.Fatal(httpUpstreamErr)
	}
	url, stop, err := peer.StartUpstreamHTTP(httpUpstreamBin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// TestServeHTTPUpstream: a url server whose header value comes from serve's
// environment. With the variable set, a host's tool calls and sampling go
// through the HTTP upstream (which refuses any request without the
// header); unset, `check` and `serve` refuse to start, naming the variable
// and never the value.
func TestServeHTTPUpstream(t *testing.T) {
	const secret = "s3cret-token"
	url := startHTTPUpstream(t, "-require-header", "X-Peer-Token: "+secret)
	server := fmt.Sprintf("  peer:\n    url: %s\n    headers: {X-Peer-Token: \"${MCPXFW_TEST_PEER_TOKEN}\"}\n    max_tokens: 1000\n", url)
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, server)

	t.Run("variable unset", func(t *testing.T) {
		for _, sub := range []string{"check", "serve"} {
			res := runCLI(t, sub, "--config", cfg)
			if res.code != exitFailure || !strings.Contains(res.stderr, "${MCPXFW_TEST_PEER_TOKEN} is not set") || !oneLine(res.stderr) {
				t.Errorf("%s: exit %d, stderr %q; want 1 and one line naming the variable", sub, res.code, res.stderr)
			}
		}
	})
	t.Run("variable set", func(t *testing.T) {
		t.Setenv("MCPXFW_TEST_PEER_TOKEN", secret)
		h := startFirewall(t, cfg, answerWith(hostAnswer))
		res, err := h.CallTool(t.Context(), "echo", map[string]any{"text": "over http"})
		if err != nil || res.Text != "over http" {
			t.Fatalf("echo: %+v, %v", res, err)
		}
		out, err := h.Sample(t.Context(), json.RawMessage(plainRequest))
		if err != nil || out.Error != nil || !strings.Contains(string(out.Completion), "the host's answer") {
			t.Fatalf("sample: %+v, %v", out, err)
		}
		_ = h.Close() // serve exits and flushes its logs
		for _, name := range []string{"serve.log", "decisions.jsonl"} {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), name))
			if err != nil || bytes.Contains(b, []byte(secret)) || len(b) == 0 {
				t.Errorf("%s: %d bytes, has the header value: %v, err %v", name, len(b), bytes.Contains(b, []byte(secret)), err)
			}
		}
	})
}
