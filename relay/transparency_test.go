package relay

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var bothEras = []string{"2025-11-25", modernEra}

// TestProgressRelayed: progress reaches the host with the host's own token;
// the upstream only ever sees the firewall's.
func TestProgressRelayed(t *testing.T) {
	for _, era := range bothEras {
		t.Run(era, func(t *testing.T) {
			var mu sync.Mutex
			var got []*mcp.ProgressNotificationParams
			host := connectHost(t, newTestProxy(t, "peer"), era, &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{},
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					got = append(got, req.Params)
					mu.Unlock()
				}})
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3},
				Meta: mcp.Meta{"progressToken": "host-token"}})
			if err != nil {
				t.Fatal(err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, "token mcpx-fw-") {
				t.Errorf("upstream saw %q, want the firewall's token", text)
			}
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 })
			for i, n := range got {
				if n.ProgressToken != "host-token" || n.Progress != float64(i+1) || n.Total != 3 {
					t.Errorf("notification %d = %+v, want host-token %d/3", i, n, i+1)
				}
			}
		})
	}
}

// TestListChangedRelayed: an upstream whose tools change tells the firewall,
// which tells the host; the host's next list has the new tool.
func TestListChangedRelayed(t *testing.T) {
	for _, era := range bothEras {
		t.Run(era, func(t *testing.T) {
			changed := make(chan struct{}, 8)
			host := connectHost(t, newTestProxy(t, "peer"), era, &mcp.ClientOptions{
				Capabilities:           &mcp.ClientCapabilities{},
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
			if _, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "add_tool", Arguments: map[string]any{"name": "fresh"}}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("the host was not told the tool list changed")
			}
			var names []string
			for tool, err := range host.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			if !strings.Contains(strings.Join(names, ","), "fresh") || strings.Contains(strings.Join(names, ","), sentinel) {
				t.Errorf("tools after the change: %v, want fresh and no sentinel", names)
			}
		})
	}
}

// TestMetaDoesNotCross: protocol _meta keys and server or client identity
// of one side never reach the other, on the wire; other _meta keys pass.
func TestMetaDoesNotCross(t *testing.T) {
	for _, era := range bothEras {
		t.Run(era, func(t *testing.T) {
			rec := &recorder{}
			host := connectHostVia(t, newTestProxy(t, "peer"), era, rec)
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "meta", Arguments: map[string]any{},
				Meta: mcp.Meta{mcp.MetaKeyClientInfo: map[string]any{"name": "host-secret-client"}, "io.modelcontextprotocol/internal": "host-secret-key", "vendor.example/h": 1}})
			if err != nil {
				t.Fatal(err)
			}
			upstreamSaw := res.Content[0].(*mcp.TextContent).Text
			if strings.Contains(upstreamSaw, "host-secret") || !strings.Contains(upstreamSaw, "vendor.example/h") {
				t.Errorf("upstream saw _meta %s: want the host's own key and none of its protocol keys", upstreamSaw)
			}
			wire := rec.String()
			if strings.Contains(wire, "peer-secret") || !strings.Contains(wire, "vendor.example/kept") {
				t.Errorf("host received %s: want the upstream's own key and none of its protocol keys", wire)
			}
		})
	}
}

// recorder keeps every frame a host reads.
type recorder struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

type recordingTransport struct {
	mcp.Transport
	rec *recorder
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, rec: t.rec}, nil
}

type recordingConn struct {
	mcp.Connection
	rec *recorder
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		b, _ := jsonrpc.EncodeMessage(msg)
		c.rec.mu.Lock()
		c.rec.buf.Write(b)
		c.rec.buf.WriteByte('\n')
		c.rec.mu.Unlock()
	}
	return msg, err
}

// connectHostVia is connectHost with the host's reads recorded.
func connectHostVia(t *testing.T, p *Proxy, version string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	return connectClient(t, p, version, client, func(tr mcp.Transport) mcp.Transport { return &recordingTransport{Transport: tr, rec: rec} })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 10s")
}

// TestCancellationReachesUpstream: a host that cancels its call cancels the
// upstream's, for a host of either era.
func TestCancellationReachesUpstream(t *testing.T) {
	for _, era := range bothEras {
		t.Run(era, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "peer.log")
			p := newTestProxy(t, "peer")
			p.cfg.Upstreams[0].Env = map[string]string{"MCPXFW_PEER_LOG": log}
			host := connectHost(t, p, era, nil)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			if _, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}}); err == nil {
				t.Fatal("block returned without being cancelled")
			}
			waitForLine(t, log, "block: cancelled")
		})
	}
}
