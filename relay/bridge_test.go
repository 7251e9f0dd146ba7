package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

const helloParams = `{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":10}`

// bridgedProxy is a proxy whose one upstream pushes (it is held to the
// legacy revision) behind a 2026-07-28 host, counting the host's calls.
func bridgedProxy(t *testing.T) (*Proxy, *atomic.Int32) {
	p := newTestProxy(t, "peer")
	p.cfg.Upstreams[0].Era = "legacy"
	var calls atomic.Int32
	p.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				calls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return p, &calls
}

// TestBridgeRounds: each push of a bridged call is one round with the
// host; pushes that arrive together share a round.
func TestBridgeRounds(t *testing.T) {
	for _, tc := range []struct {
		name            string
		times, together int
		asked, calls    int32
	}{
		{"one push", 1, 1, 1, 2},
		{"three in a row", 3, 1, 3, 4},
		{"three together", 1, 3, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, calls := bridgedProxy(t)
			var asked atomic.Int32
			host := connectHost(t, p, modernEra, samplingHost(&asked))
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{
				"params": json.RawMessage(helloParams), "times": tc.times, "together": tc.together}})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %v", res, err)
			}
			if !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"completion"`) {
				t.Fatalf("no completion: %s", res.Content[0].(*mcp.TextContent).Text)
			}
			if asked.Load() != tc.asked || calls.Load() != tc.calls {
				t.Errorf("host asked %d times in %d calls, want %d in %d", asked.Load(), calls.Load(), tc.asked, tc.calls)
			}
		})
	}
}

// TestBridgeRoundCap: past limits.max_rounds the host's call fails with a
// message that names the limit.
func TestBridgeRoundCap(t *testing.T) {
	p, _ := bridgedProxy(t)
	p.cfg.MaxRounds = 2
	var asked atomic.Int32
	host := connectHost(t, p, modernEra, samplingHost(&asked))
	_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{
		"params": json.RawMessage(helloParams), "times": 3}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != refusal.CodeInternal || !strings.Contains(we.Message, "limits.max_rounds") {
		t.Fatalf("err = %v, want -32603 naming limits.max_rounds", err)
	}
	if asked.Load() != 2 {
		t.Errorf("host asked %d times, want 2", asked.Load())
	}
}

// TestBridgeExpiry: a host that never retries leaves nothing behind. The
// parked push gets -32603 naming expiry, the bridged session is closed,
// and a late retry is refused.
func TestBridgeExpiry(t *testing.T) {
	log := filepath.Join(t.TempDir(), "outcomes")
	p, _ := bridgedProxy(t)
	p.cfg.Upstreams[0].Env = map[string]string{"MCPXFW_PEER_LOG": log}
	p.cfg.StateTTL = 300 * time.Millisecond
	host := connectHost(t, p, modernEra, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	args := map[string]any{"params": json.RawMessage(helloParams)}
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("first call: %+v %v, want input_required with one request", res, err)
	}
	outcome := waitForFile(t, log)
	if !strings.Contains(outcome, `"code":-32603`) || !strings.Contains(outcome, "expired after 300ms") {
		t.Fatalf("the push got %s, want -32603 naming expiry", outcome)
	}
	if n := len(p.bridges.parked); n != 0 {
		t.Errorf("%d bridges still parked", n)
	}
	_, err = host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: args, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{keyOf(res.InputRequests): hiResult()}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != refusal.CodeInvalidParams {
		t.Fatalf("late retry: %v, want -32602", err)
	}
}

// TestBridgeWait: a parked bridged call waits for the host's retry no
// longer than limits.bridge_wait, even when a requestState would live
// longer (sampling.host_timeout): the push gets -32603 naming the wait,
// the call's process ends, and a later retry is refused.
func TestBridgeWait(t *testing.T) {
	log := filepath.Join(t.TempDir(), "outcomes")
	p, _ := bridgedProxy(t)
	p.cfg.Upstreams[0].Env = map[string]string{"MCPXFW_PEER_LOG": log}
	p.cfg.StateTTL, p.cfg.BridgeWait = time.Minute, 300*time.Millisecond
	host := manualHost(t, p)
	if _, err := host.ListTools(t.Context(), nil); err != nil { // the host's own upstream is running
		t.Fatal(err)
	}
	base := upstreamProcesses(t)
	res := askInput(t, host, "sample")
	if n := upstreamProcesses(t); n != base+1 {
		t.Fatalf("%d upstream processes with one call parked, want %d", n, base+1)
	}
	outcome := waitForFile(t, log)
	if !strings.Contains(outcome, `"code":-32603`) || !strings.Contains(outcome, "expired after 300ms") {
		t.Fatalf("the push got %s, want -32603 naming the 300ms wait", outcome)
	}
	waitFor(t, func() bool { return upstreamProcesses(t) == base && p.bridges.sessions() == 0 })
	_, err := retry(t.Context(), host, "sample", keyOf(res.InputRequests), res.RequestState)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != refusal.CodeInvalidParams {
		t.Fatalf("retry after the wait: %v, want -32602", err)
	}
}

func waitForFile(t *testing.T, path string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return string(b)
		}
	}
	t.Fatalf("%s never written", path)
	return ""
}

func keyOf(m mcp.InputRequestMap) string {
	for k := range m {
		return k
	}
	return ""
}

func hiResult() *mcp.CreateMessageWithToolsResult {
	return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "test-model", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}
}

// TestLatePushNeverReachesAnotherCall: an upstream that pushes after its
// bridged call answered (a goroutine that outlived the call) cannot carry
// that push into a later call: the push is refused (-32603, no host) and
// the host, whose next call is running when it is sent, is never asked
// for it.
func TestLatePushNeverReachesAnotherCall(t *testing.T) {
	log := filepath.Join(t.TempDir(), "outcomes")
	p, _ := bridgedProxy(t)
	p.cfg.Upstreams[0].Env = map[string]string{"MCPXFW_PEER_LOG": log}
	var asked atomic.Int32
	host := connectHost(t, p, modernEra, samplingHost(&asked))
	late := `{"messages":[{"role":"user","content":{"type":"text","text":"left over from the first call"}}],"maxTokens":10}`
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample_late", Arguments: map[string]any{
		"params": json.RawMessage(late), "after_ms": 200}})
	if err != nil || res.IsError {
		t.Fatalf("first call: %v %v", res, err)
	}
	// The late push goes out as soon as a call reaches the process that
	// made it; the second call waits until it has its answer.
	res, err = host.CallTool(t.Context(), &mcp.CallToolParams{Name: "await_late", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("second call: %v %v", res, err)
	}
	outcome := waitForLine(t, log, "late: ")
	if n := asked.Load(); n != 0 {
		t.Errorf("the host was asked %d time(s) for a push that belongs to no call of its own", n)
	}
	var got peer.SampleOutcome
	if err := json.Unmarshal([]byte(outcome), &got); err != nil {
		t.Fatalf("late outcome %q: %v", outcome, err)
	}
	checkLateRefused(t, got, outcome)
}

// checkLateRefused: a late push the firewall received is refused (-32603,
// no host); one a loaded machine delayed until after its session closed
// (a second after its call) fails on the closed session instead. Either
// way no host answered it.
func checkLateRefused(t *testing.T, got peer.SampleOutcome, outcome string) {
	t.Helper()
	switch {
	case got.Error == nil:
		t.Errorf("the late push got a completion: %s", outcome)
	case got.Error.Code == refusal.CodeInternal && strings.Contains(string(got.Error.Data), refusal.ReasonNoHost):
	case got.Error.Code == refusal.CodeInternal || got.Error.Code == refusal.CodeUserRejected:
		t.Errorf("the late push got %s, want -32603 with reason %s", outcome, refusal.ReasonNoHost)
	default:
		t.Logf("the late push went out after its session closed: %s", outcome)
	}
}

// waitForLine waits for a line starting with prefix in the file at path
// and returns the rest of it.
func waitForLine(t *testing.T, path, prefix string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		for line := range strings.Lines(string(b)) {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	t.Fatalf("no line %q in %s", prefix, path)
	return ""
}

// TestBridgeLimits: bridged calls beyond limits.max_bridged_calls_per_server,
// or beyond limits.max_bridged_calls over all servers, are refused at once
// with -32603 naming the limit, and start no upstream; a parked call that
// expires gives its place back and its process ends.
func TestBridgeLimits(t *testing.T) {
	for _, tc := range []struct {
		name             string
		perServer, total int
		park             []string // servers whose sample tool is called and left parked
		want             string
	}{
		{"per server", 2, 10, []string{"alpha", "alpha"}, "limits.max_bridged_calls_per_server"},
		{"over all servers", 2, 2, []string{"alpha", "beta"}, "limits.max_bridged_calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestProxy(t, "alpha", "beta")
			for i := range p.cfg.Upstreams {
				p.cfg.Upstreams[i].Era = "legacy"
			}
			p.cfg.MaxBridgedPerServer, p.cfg.MaxBridged = tc.perServer, tc.total
			p.cfg.StateTTL, p.cfg.BridgeWait = time.Minute, 500*time.Millisecond
			host := manualHost(t, p)
			if _, err := host.ListTools(t.Context(), nil); err != nil { // the host's own upstreams are running
				t.Fatal(err)
			}
			base := upstreamProcesses(t)
			for _, server := range tc.park {
				askInput(t, host, server+"__sample")
			}
			if n := upstreamProcesses(t); n != base+len(tc.park) {
				t.Fatalf("%d upstream processes with %d calls parked, want %d", n, len(tc.park), base+len(tc.park))
			}
			_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sample", Arguments: map[string]any{"params": json.RawMessage(helloParams)}})
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != refusal.CodeInternal || !strings.HasSuffix(we.Message, "("+tc.want+")") ||
				!strings.Contains(string(we.Data), refusal.ReasonBridgeLimit) {
				t.Fatalf("call past the limit: %v, want -32603 naming %s", err, tc.want)
			}
			if n := p.bridges.sessions(); n != len(tc.park) {
				t.Errorf("%d bridged sessions after the refusal, want %d: a refused call started one", n, len(tc.park))
			}
			waitFor(t, func() bool { // the expired calls' processes end
				return upstreamProcesses(t) == base && p.bridges.sessions() == 0
			})
			askInput(t, host, "alpha__sample") // their places are free again
		})
	}
}

// upstreamProcesses counts the running children of this process that run
// the test upstream.
func upstreamProcesses(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("counts processes through /proc")
	}
	bin, me := testUpstream(t), os.Getpid()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue // not a process, or one that just ended
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[0] == "Z" || fields[1] != strconv.Itoa(me) {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe")); err == nil && exe == bin {
			n++
		}
	}
	return n
}
