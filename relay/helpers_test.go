package relay

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

var (
	upstreamOnce sync.Once
	upstreamBin  string
	upstreamErr  error
)

// testUpstream builds the project's test upstream (testdata/upstream) once.
func testUpstream(t testing.TB) string {
	t.Helper()
	upstreamOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpx-fw-upstream-")
		if err != nil {
			upstreamErr = err
			return
		}
		upstreamBin = filepath.Join(dir, "upstream")
		out, err := exec.Command("go", "build", "-o", upstreamBin, "../testdata/upstream").CombinedOutput()
		if err != nil {
			upstreamErr = &buildError{err: err, out: string(out)}
		}
	})
	if upstreamErr != nil {
		t.Fatal(upstreamErr)
	}
	return upstreamBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "build test upstream: " + e.err.Error() + "\n" + e.out }

// newTestProxy builds a Proxy with the real engine over the shipped
// policies and a real review store in a temporary state dir.
func newTestProxy(t testing.TB, names ...string) *Proxy {
	t.Helper()
	return newTestProxyConfig(t, nil, names...)
}

// newTestProxyConfig is newTestProxy with set applied to each server's
// config as the policies see it (data.mcpxfw.config.servers[name]).
func newTestProxyConfig(t testing.TB, set func(server map[string]any), names ...string) *Proxy {
	t.Helper()
	return newTestProxyOn(t, filepath.Join(t.TempDir(), "state"), nil, set, names...)
}

// newTestProxyOn is newTestProxyConfig with a store of its own on the
// review queue in dir and the seal key given (nil: a random one): Proxies
// made on one dir with one key are replicas sharing a store.
func newTestProxyOn(t testing.TB, dir string, key []byte, set func(server map[string]any), names ...string) *Proxy {
	t.Helper()
	store, err := review.Open(dir, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	servers := map[string]any{}
	var ups []Upstream
	for _, n := range names {
		servers[n] = map[string]any{"label": "test " + n, "max_tokens": 1000}
		if set != nil {
			set(servers[n].(map[string]any))
		}
		ups = append(ups, Upstream{Name: n, Label: "test " + n, Command: []string{testUpstream(t)}, Sampling: true,
			Elicitation: ElicitationConfig{Enabled: true}, Roots: RootsConfig{Enabled: true}}) // cmd's defaults
	}
	eng, err := engine.New(t.Context(), engine.Config{
		Policy:        engine.PolicyConfig{Dir: "../policies", Timeout: time.Second, Data: map[string]any{"default": "review", "servers": servers}},
		ReviewTimeout: time.Minute,
	}, store, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Upstreams: ups, HostTimeout: 10 * time.Second, SealKey: key}, eng, store, zap.NewNop())
}

// connectHost connects an in-memory host client to p at version with opts.
func connectHost(t *testing.T, p *Proxy, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	}
	return connectClient(t, p, version, mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts))
}

// connectClient connects client to p over an in-memory stdio stream at
// version, as `mcpx-fw serve` is connected (the frame path included);
// wrap, if given, wraps the host's end (to record what it reads).
func connectClient(t *testing.T, p *Proxy, version string, client *mcp.Client, wrap ...func(mcp.Transport) mcp.Transport) *mcp.ClientSession {
	t.Helper()
	hostT, serveIn, serveOut := hostPipe()
	var ht mcp.Transport = hostT
	for _, w := range wrap {
		ht = w(ht)
	}
	return connectServed(t, func(ctx context.Context) error { return p.ServeStdio(ctx, serveIn, serveOut) }, ht, client, version)
}

// connectServed runs serve until the test ends and connects client to it
// over ht at version.
func connectServed(t testing.TB, serve func(ctx context.Context) error, ht mcp.Transport, client *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx) }()
	cs, err := client.Connect(t.Context(), ht, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		<-done
	})
	return cs
}

// connectDirect connects a host client straight to a test upstream.
func connectDirect(t *testing.T, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
		Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(testUpstream(t))}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// hostPipe is a stdio stream between a host and ServeStdio, in memory: the
// host's transport, and the firewall's input and output.
func hostPipe() (host mcp.Transport, in io.ReadCloser, out io.WriteCloser) {
	hostEnd, serveEnd := net.Pipe()
	return &mcp.IOTransport{Reader: hostEnd, Writer: hostEnd}, serveEnd, serveEnd
}
