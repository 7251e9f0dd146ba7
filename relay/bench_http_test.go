package relay

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCallHTTP is P1 over streamable HTTP: the host calls the
// test upstream's echo through `mcpx-fw serve --http` (which reaches the
// upstream over stdio, as it is deployed for a command server), and
// directly the same test upstream serving streamable HTTP itself
// (testdata/upstream -http: the same server and the same echo, behind the
// Go SDK's HTTP handler). Rounds, concurrencies and metrics as
// BenchmarkToolCall's; the CPU figures are serve's, the upstream's behind
// it, and the HTTP upstream's.
func BenchmarkToolCallHTTP(b *testing.B) {
	toolCallRounds(b, startHTTPPair(b, buildFirewall(b), testUpstream(b)))
}

// startHTTPPair starts `bin serve --http` on a free loopback port, with the
// stdio upstream command as its one server, and the same command with
// -http on another, and connects the benchmark's host to each.
func startHTTPPair(tb testing.TB, bin, upstream string) benchPair {
	tb.Helper()
	serve := exec.Command(bin, "serve", "--config", benchConfig(tb, []string{upstream}), "--http", "127.0.0.1:0")
	fwURL := startListening(tb, serve, serve.StderrPipe, "mcpx-fw: listening on ")
	direct := exec.Command(upstream, "-http", "127.0.0.1:0")
	directURL := startListening(tb, direct, direct.StdoutPipe, "")
	return benchPair{
		fw:     connectBenchHost(tb, benchHTTPTransport(fwURL), fwURL),
		direct: connectBenchHost(tb, benchHTTPTransport(directURL), directURL),
		serve:  serve.Process.Pid, upstream: direct.Process.Pid,
	}
}

// benchHTTPTransport is a host's transport to url with a connection pool
// of its own, large enough to keep a connection per call in flight: with
// net/http's default of 2 idle connections per host, 32 calls at once
// would open and close connections on every round.
func benchHTTPTransport(url string) mcp.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: t}}
}

// startListening starts cmd and returns the http:// URL it prints after
// prefix on the output pipe opens, and discards the rest of that output.
// It stops cmd when tb ends: an interrupt, as a host would send, then a
// kill if it has not exited within 10 s.
func startListening(tb testing.TB, cmd *exec.Cmd, pipe func() (io.ReadCloser, error), prefix string) string {
	tb.Helper()
	out, err := pipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), prefix); ok && strings.HasPrefix(url, "http://") {
				found <- url
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case url := <-found:
		return url
	case <-exited:
		tb.Fatalf("%s exited before listening", cmd.Path)
	case <-time.After(time.Minute):
		tb.Fatalf("%s printed no URL within a minute", cmd.Path)
	}
	return ""
}

// BenchmarkSamplingHTTP is P2 with the host reaching `mcpx-fw serve
// --http` over streamable HTTP (the push rides the stream of the host's
// tools/call), serve reaching the timing upstream over stdio. The timing
// upstream speaks stdio only, so the direct path is BenchmarkSampling's:
// the ratio holds the HTTP hop as well as the firewall.
func BenchmarkSamplingHTTP(b *testing.B) {
	bin := buildFirewall(b)
	samplingRounds(b, func(self string) benchPair {
		serve := exec.Command(bin, "serve", "--config", benchConfig(b, []string{self, benchUpstreamArg}), "--http", "127.0.0.1:0")
		fwURL := startListening(b, serve, serve.StderrPipe, "mcpx-fw: listening on ")
		direct := exec.Command(self, benchUpstreamArg)
		return benchPair{
			fw:     connectBenchHost(b, benchHTTPTransport(fwURL), fwURL),
			direct: connectBenchHost(b, &mcp.CommandTransport{Command: direct}, self),
			serve:  serve.Process.Pid, upstream: direct.Process.Pid,
		}
	})
}
