package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestNamesPrefixAlways: with names.prefix: always, serve gives its one
// server's tools the server's prefix and routes calls by it; serve
// --server NAME (what `mcpx-fw host connect` writes) keeps the server's
// own names whatever the option says.
func TestNamesPrefixAlways(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute,
		fmt.Sprintf("  peer:\n    command: [%q]\n    max_tokens: 1000\n", upstreamBinary))
	appendConfig(t, cfg, "names:\n  prefix: always\n")
	tests := []struct {
		name       string
		args       []string
		tool, skip string // the echo tool as the host sees it, and a name it must not see
	}{
		{"serve", []string{"serve", "--config", cfg}, "peer__echo", "echo"},
		{"serve --server", []string{"serve", "--config", cfg, "--server", "peer"}, "echo", "peer__echo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			h, err := peer.StartHost(ctx, peer.HostOptions{Command: append([]string{binary}, tc.args...), Tools: true})
			if err != nil {
				t.Fatalf("start serve: %v", err)
			}
			defer h.Close()
			names, err := h.ToolNames(ctx)
			if err != nil || !slices.Contains(names, tc.tool) || slices.Contains(names, tc.skip) {
				t.Fatalf("tools %v, %v: want %s and not %s", names, err, tc.tool, tc.skip)
			}
			if res, err := h.CallTool(ctx, tc.tool, map[string]any{"text": "hi"}); err != nil || res.Text != "hi" {
				t.Fatalf("%s: %+v, %v", tc.tool, res, err)
			}
		})
	}
}
