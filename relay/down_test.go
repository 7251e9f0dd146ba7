package relay

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerDownIsOneServerDown: of two servers, one whose command is
// missing is that server down, not the host's session. Over stdio and over
// HTTP the host initializes, lists the other server's tools (with the
// names it has when both run), calls them, and a call to the down one is
// refused naming it, since when and what to do.
func TestServerDownIsOneServerDown(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			p := newTestProxy(t, "broken", "peer")
			p.cfg.Upstreams[0].Command = []string{t.TempDir() + "/missing-server"}
			var host *mcp.ClientSession
			if transport == "stdio" {
				host = connectHost(t, p, "2025-11-25", nil)
			} else {
				host = connectHTTPHost(t, serveHTTPTest(t, p), "2025-11-25", nil)
			}
			wantServing(t, host)
			_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "broken__echo", Arguments: map[string]any{"text": "x"}})
			if err == nil || !strings.Contains(err.Error(), "upstream broken is down since") || !strings.Contains(err.Error(), "mcpx-fw status") {
				t.Errorf("a call to the down server: %v; want it refused naming it down and where to look", err)
			}
		})
	}
}

// wantServing checks that host lists peer's tools, and only those, and
// that a call to one is answered.
func wantServing(t *testing.T, host *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var names []string
	for tool, err := range host.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list with one server down: %v", err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "peer__echo") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "broken__") }) {
		t.Errorf("tools listed with broken down: %v; want peer's, prefixed, and none of broken's", names)
	}
	res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "peer__echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "still here" {
		t.Errorf("peer__echo with broken down: %+v, %v", res, err)
	}
}
