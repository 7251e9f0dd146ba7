package relay

// Benchmarks P1 and P2 of the benchmark harness (.ci/bench; method and
// figures in BENCHMARKS.md). Both run the firewall as it is deployed, a
// `mcpx-fw serve` subprocess over stdio (P1 also over streamable HTTP:
// bench_http_test.go), and measure it side by side with
// the same host talking to the same upstream directly. Each iteration
// makes one round on each path, alternating which goes first, so both
// see the same machine load; every sub-benchmark reports both figures and
// their ratio (fw/direct) as metrics.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchUpstreamArg, as the first argument, makes the test binary serve as
// P2's timing upstream instead of running tests (see init). It is an
// argument, not an environment variable, because serve's config lowercases
// the keys of servers.<name>.env.
const benchUpstreamArg = "mcpxfw-bench-upstream"

// init turns the test binary into the timing upstream when it is started
// with benchUpstreamArg: P2 needs an upstream that times its own sampling
// request, which the project's test upstream does not.
func init() {
	if len(os.Args) < 2 || os.Args[1] != benchUpstreamArg {
		return
	}
	if err := runTimingUpstream(); err != nil {
		fmt.Fprintln(os.Stderr, "timing upstream:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runTimingUpstream serves one tool over stdio, timed_sample {params}: it
// pushes params as sampling/createMessage and answers with the
// nanoseconds the round trip took as seen by the upstream, so P2 measures
// upstream -> (firewall ->) host -> (firewall ->) upstream and nothing else.
func runTimingUpstream() error {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpx-fw-bench-upstream", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "timed_sample", Description: "Pushes params as sampling/createMessage; reports the round trip in ns.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}`)}, timedSample)
	err := srv.Run(context.Background(), &mcp.StdioTransport{})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// timedSample times CreateMessageWithTools alone: decoding its arguments
// and encoding its answer stay outside the measured span.
func timedSample(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Params mcp.CreateMessageWithToolsParams `json:"params"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, err
	}
	start := time.Now()
	_, err := req.Session.CreateMessageWithTools(ctx, &args.Params)
	took := time.Since(start)
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatInt(took.Nanoseconds(), 10)}}}, nil
}

// benchPair is one host connected twice to one upstream: through a
// `mcpx-fw serve` subprocess and directly. serve and upstream are the pids
// of the two processes the benchmark started (serve, and the upstream of
// the direct path), for the CPU readings.
type benchPair struct {
	fw, direct      *mcp.ClientSession
	serve, upstream int
}

// startPair starts both paths to the upstream command, the firewall from
// the binary bin with a state dir of its own, and connects the benchmark's
// host to each over stdio.
func startPair(tb testing.TB, bin string, command ...string) benchPair {
	tb.Helper()
	cfg := benchConfig(tb, command)
	serve, upstream := exec.Command(bin, "serve", "--config", cfg), exec.Command(command[0], command[1:]...)
	return benchPair{
		fw:     connectBenchHost(tb, &mcp.CommandTransport{Command: serve}, serve.Path),
		direct: connectBenchHost(tb, &mcp.CommandTransport{Command: upstream}, upstream.Path),
		serve:  serve.Process.Pid, upstream: upstream.Process.Pid,
	}
}

// buildFirewall builds cmd/mcpx-fw into tb's temporary folder: the
// benchmark measures the binary a host would run, not the relay in-process.
// MCPXFW_BENCH_BINARY names one already built instead (.ci/bench builds
// one for every figure; a profiling build can be swapped in).
func buildFirewall(tb testing.TB) string {
	tb.Helper()
	if bin := os.Getenv("MCPXFW_BENCH_BINARY"); bin != "" {
		return bin
	}
	bin := filepath.Join(tb.TempDir(), "mcpx-fw")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/mcpx-fw").CombinedOutput(); err != nil {
		tb.Fatalf("build mcpx-fw: %v\n%s", err, out)
	}
	return bin
}

// benchConfig writes a serve config with the one upstream "bench" and the
// shipped policies, which permit plain text requests from a configured
// server. Logs and decisions go to files, as in a real deployment.
func benchConfig(tb testing.TB, command []string) string {
	tb.Helper()
	dir := tb.TempDir()
	policies, err := filepath.Abs("../policies")
	if err != nil {
		tb.Fatal(err)
	}
	cmd, _ := json.Marshal(command)
	cfg := fmt.Sprintf(`state_dir: %q
policy: {dir: %q}
review: {timeout: 10m}
sampling: {host_timeout: 30s}
servers:
  bench: {command: %s, label: Benchmark upstream, max_tokens: 4096}
decision_log: {sink: %q}
log: {file: %q}
`, filepath.Join(dir, "state"), policies, cmd, filepath.Join(dir, "decisions.jsonl"), filepath.Join(dir, "serve.log"))
	path := filepath.Join(dir, "mcpx-fw.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// benchCompletion is what the benchmark's host model always answers.
var benchCompletion = &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "bench-model", StopReason: "endTurn",
	Content: []mcp.Content{&mcp.TextContent{Text: "The change renames a field and updates its callers."}}}

// benchEra is the revision the benchmark's host speaks: the last in which
// an upstream pushes sampling, which is what P2 measures.
const benchEra = "2025-11-25"

// connectBenchHost connects, over t, a host that declares sampling and
// answers every request at once with benchCompletion; what names the
// other end in a failure.
func connectBenchHost(tb testing.TB, t mcp.Transport, what string) *mcp.ClientSession {
	tb.Helper()
	opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return benchCompletion, nil
		}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-host", Version: "1"}, opts).
		Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: benchEra})
	if err != nil {
		tb.Fatalf("connect %s: %v", what, err)
	}
	tb.Cleanup(func() { _ = cs.Close() })
	return cs
}

// side is what one path did during a benchmark: every operation's
// latency, the wall time spent in rounds on it, and the CPU its processes
// spent over the sub-benchmark's rounds (nil: not read).
type side struct {
	took []time.Duration
	wall time.Duration
	cpu  *cpuMeter
}

func (s *side) percentile(p int) time.Duration {
	sorted := slices.Sorted(slices.Values(s.took))
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100 // nearest rank
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

func (s *side) perSecond() float64 { return float64(len(s.took)) / s.wall.Seconds() }

// report records both sides' p50 and p99 in µs and throughput, and the
// ratios fw/direct that the targets are stated in.
func report(b *testing.B, fw, direct *side, unit string) {
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	for _, p := range []int{50, 99} {
		f, d := fw.percentile(p), direct.percentile(p)
		b.ReportMetric(us(f), fmt.Sprintf("fw-p%d-µs", p))
		b.ReportMetric(us(d), fmt.Sprintf("direct-p%d-µs", p))
		b.ReportMetric(float64(f)/float64(d), fmt.Sprintf("x-p%d", p))
	}
	b.ReportMetric(fw.perSecond(), "fw-"+unit+"/s")
	b.ReportMetric(direct.perSecond(), "direct-"+unit+"/s")
	b.ReportMetric(fw.perSecond()/direct.perSecond(), "x-"+unit+"/s")
}

// alternate runs one round on each path per iteration, the order swapped
// every iteration, so that drifting load weighs on both alike. Each
// path's processes are metered from the first round to the last (see
// cpuMeter).
func alternate(b *testing.B, pair benchPair, round func(cs *mcp.ClientSession, s *side) error) (fw, direct *side) {
	fw = &side{cpu: newCPUMeter(serveGroups(b, pair.serve)...)}
	direct = &side{cpu: newCPUMeter(directGroups(b, pair.upstream)...)}
	fw.cpu.start()
	direct.cpu.start()
	for i := 0; b.Loop(); i++ {
		first, second := pair.direct, pair.fw
		firstSide, secondSide := direct, fw
		if i%2 == 1 {
			first, second, firstSide, secondSide = second, first, secondSide, firstSide
		}
		if err := round(first, firstSide); err != nil {
			b.Fatal(err)
		}
		if err := round(second, secondSide); err != nil {
			b.Fatal(err)
		}
	}
	fw.cpu.stop()
	direct.cpu.stop()
	return fw, direct
}

// BenchmarkToolCall is P1: a tools/call round trip (the test upstream's
// echo) from the host through `mcpx-fw serve` to testdata/upstream, and
// from the host to it directly, both over stdio, at 1 and at 32 calls in
// flight on one session. At concurrency 32 a round is 32 workers making 8
// calls each; throughput is calls per second of wall time in rounds on
// that path. On Linux it also reports the CPU per call of serve, of the
// upstream behind it and of the direct upstream (cpu_bench_test.go).
func BenchmarkToolCall(b *testing.B) {
	toolCallRounds(b, startPair(b, buildFirewall(b), testUpstream(b)))
}

// toolCallRounds is P1 on pair, whatever the transport: a first call on
// each path (which starts an HTTP session's upstream), then each
// concurrency as a sub-benchmark.
func toolCallRounds(b *testing.B, pair benchPair) {
	args := map[string]any{"text": "ping"}
	for _, cs := range []*mcp.ClientSession{pair.fw, pair.direct} {
		if err := echoCall(cs, args); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct{ workers, calls int }{{1, 1}, {32, 8}} {
		b.Run(fmt.Sprintf("c=%d", c.workers), func(b *testing.B) {
			fw, direct := alternate(b, pair, func(cs *mcp.ClientSession, s *side) error {
				return concurrently(s, c.workers, c.calls, func() error { return echoCall(cs, args) })
			})
			report(b, fw, direct, "calls")
			reportCPU(b, fw, direct)
		})
	}
}

// echoCall makes one tools/call of echo and checks that it succeeded.
func echoCall(cs *mcp.ClientSession, args map[string]any) error {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err == nil && res.IsError {
		err = errors.New("echo failed")
	}
	return err
}

// concurrently runs op calls times in each of workers goroutines, and adds
// each op's latency and the round's wall time to s.
func concurrently(s *side, workers, calls int, op func() error) error {
	took := make([][]time.Duration, workers)
	errs := make([]error, workers)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range calls {
				t0 := time.Now()
				if errs[w] = op(); errs[w] != nil {
					return
				}
				took[w] = append(took[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	s.wall += time.Since(start)
	for _, t := range took {
		s.took = append(s.took, t...)
	}
	return errors.Join(errs...)
}

// BenchmarkSampling is P2: a sampling round trip answered by the host's
// model, timed by the upstream from its push to the completion it
// receives; through the firewall the request and the completion are each
// validated, decided (permit) and logged, and usage is recorded. The
// shapes are P3's: one short message, and ten messages of 400 bytes. The
// host-side latency of the enclosing tools/call is reported as call-*, and
// serve's CPU per round trip as P1 reports it per call (cpu_bench_test.go).
//
// Each run starts a firewall with an empty state dir: every decision reads
// the server's usage over the last hour, which costs more the more
// decisions it holds, so a fixed -benchtime Nx gives comparable figures.
func BenchmarkSampling(b *testing.B) {
	bin := buildFirewall(b)
	samplingRounds(b, func(self string) benchPair { return startPair(b, bin, self, benchUpstreamArg) })
}

// BenchmarkSamplingFloor is P2's floor: the same rounds as
// BenchmarkSampling with testdata/relayfloor, two io.Copy loops, in
// mcpx-fw serve's place, so serve's sampling round trip can be put against
// the least any stdio relay adds in the same run.
func BenchmarkSamplingFloor(b *testing.B) {
	floor := buildFloor(b)
	samplingRounds(b, func(self string) benchPair {
		relay, direct := exec.Command(floor, self, benchUpstreamArg), exec.Command(self, benchUpstreamArg)
		return benchPair{
			fw:     connectBenchHost(b, &mcp.CommandTransport{Command: relay}, floor),
			direct: connectBenchHost(b, &mcp.CommandTransport{Command: direct}, self),
			serve:  relay.Process.Pid, upstream: direct.Process.Pid,
		}
	})
}

// samplingRounds is P2 on the pairs start makes, one per shape, each with
// the test binary as the timing upstream (self).
func samplingRounds(b *testing.B, start func(self string) benchPair) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct {
		name    string
		n, size int
	}{{"1msg", 1, 60}, {"10x400B", 10, 400}} {
		args := map[string]any{"params": samplingParams(shape.n, shape.size)}
		b.Run(shape.name, func(b *testing.B) {
			pair := start(self)
			calls := map[*mcp.ClientSession]*side{pair.fw: {}, pair.direct: {}}
			fw, direct := alternate(b, pair, func(cs *mcp.ClientSession, s *side) error {
				return timedSampleCall(cs, args, s, calls[cs])
			})
			report(b, fw, direct, "samples")
			reportCPU(b, fw, direct)
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			b.ReportMetric(us(calls[pair.fw].percentile(50)), "fw-call-p50-µs")
			b.ReportMetric(us(calls[pair.direct].percentile(50)), "direct-call-p50-µs")
		})
	}
}

// timedSampleCall calls timed_sample and adds the upstream's measure of
// the sampling round trip to s, and the whole call's latency to call.
func timedSampleCall(cs *mcp.ClientSession, args map[string]any, s, call *side) error {
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "timed_sample", Arguments: args})
	took := time.Since(start)
	if err != nil {
		return err
	}
	text := res.Content[0].(*mcp.TextContent).Text
	ns, err := strconv.ParseInt(text, 10, 64)
	if res.IsError || err != nil {
		return fmt.Errorf("sampling was not answered: %s", text)
	}
	s.took, s.wall = append(s.took, time.Duration(ns)), s.wall+time.Duration(ns)
	call.took, call.wall = append(call.took, took), call.wall+took
	return nil
}

// samplingBenchText is prose without words about secrets, so the shipped
// policy permits it.
const samplingBenchText = "The reviewer reads the change, notes what it does and why, and asks for a test where one is missing. "

// samplingParams is a chat of n messages of size bytes of text each,
// alternating user and assistant and ending with the user, with the
// system prompt and maxTokens of engine's BenchmarkDecide.
func samplingParams(n, size int) map[string]any {
	text := strings.Repeat(samplingBenchText, size/len(samplingBenchText)+1)[:size]
	msgs := make([]any, n)
	for i := range msgs {
		role := "user"
		if (n-1-i)%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]any{"role": role, "content": map[string]any{"type": "text", "text": text}}
	}
	return map[string]any{"messages": msgs, "maxTokens": 1000, "systemPrompt": "You review pull requests. Be concise and kind."}
}

// BenchmarkToolCallFloor is P1's floor: the same rounds as
// BenchmarkToolCall with testdata/relayfloor, two io.Copy loops, in
// mcpx-fw serve's place. Its ratio to the direct path is what two more
// pipe hops cost on this machine whatever the relay does, the least any
// stdio relay can add.
func BenchmarkToolCallFloor(b *testing.B) {
	floor := buildFloor(b)
	upstream := testUpstream(b)
	relay, direct := exec.Command(floor, upstream), exec.Command(upstream)
	toolCallRounds(b, benchPair{
		fw:     connectBenchHost(b, &mcp.CommandTransport{Command: relay}, floor),
		direct: connectBenchHost(b, &mcp.CommandTransport{Command: direct}, upstream),
		serve:  relay.Process.Pid, upstream: direct.Process.Pid,
	})
}

// buildFloor builds testdata/relayfloor into b's temporary folder.
func buildFloor(b *testing.B) string {
	floor := filepath.Join(b.TempDir(), "relayfloor")
	if out, err := exec.Command("go", "build", "-o", floor, "../testdata/relayfloor").CombinedOutput(); err != nil {
		b.Fatalf("build relayfloor: %v\n%s", err, out)
	}
	return floor
}
