package relay

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// rootsChangesSeen counts the notifications/roots/list_changed the
// recording upstream behind tool (a `received` tool) got.
func rootsChangesSeen(t *testing.T, host *mcp.ClientSession, tool string) int {
	t.Helper()
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var got []peer.Received
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range got {
		if r.Method == "notifications/roots/list_changed" {
			n++
		}
	}
	return n
}

// TestRootsListChanged: a host's notifications/roots/list_changed reaches
// the upstreams of that host that were offered roots with listChanged,
// and no other: not one whose config withholds roots, not a 2026-07-28
// upstream (offered roots per request, with no such notification), not
// another host's.
func TestRootsListChanged(t *testing.T) {
	p := newTestProxy(t, "quiet", "told", "modern")
	for i := range p.cfg.Upstreams {
		p.cfg.Upstreams[i].Command = append(p.cfg.Upstreams[i].Command, "-record")
	}
	p.cfg.Upstreams[0].Roots.Enabled = false
	p.cfg.Upstreams[2].Era = "2026-07-28"
	rootsHost := func() (*mcp.Client, *mcp.ClientSession) {
		c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"},
			&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}})
		return c, connectClient(t, p, "2025-11-25", c)
	}
	client, host := rootsHost()
	_, other := rootsHost()
	// The other host's upstreams run: a notification meant for it would
	// find them.
	if n := rootsChangesSeen(t, other, "told__received"); n != 0 {
		t.Fatalf("the other host's upstream saw %d roots changes before any", n)
	}
	client.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"}) // sends notifications/roots/list_changed

	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for rootsChangesSeen(t, host, "told__received") == 0 {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the upstream offered roots.listChanged never got the host's notifications/roots/list_changed")
		}
	}
	// Upstreams of one host are notified in one round, in order, so quiet's
	// would have come before told's.
	for _, tc := range []struct {
		host *mcp.ClientSession
		tool string
	}{{host, "quiet__received"}, {host, "modern__received"}, {other, "quiet__received"}, {other, "told__received"}, {other, "modern__received"}} {
		if n := rootsChangesSeen(t, tc.host, tc.tool); n != 0 {
			t.Errorf("%s saw %d roots changes", tc.tool, n)
		}
	}
}
