package relay

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// prefixedProxy is newTestProxy with Config.PrefixNames (names.prefix:
// always).
func prefixedProxy(t *testing.T, names ...string) *Proxy {
	t.Helper()
	p := newTestProxy(t, names...)
	p.cfg.PrefixNames = true
	return p
}

// TestPrefixNamesOneServer: with names.prefix always, one server's tools
// and prompts reach the host as <server>__<name>, on every path a host is
// served by (the frame path on stdio, the SDK on both sides, HTTP, a
// 2026-07-28 host), and the host's calls by those names reach the server
// under its own names; its own names are unknown to the host.
func TestPrefixNamesOneServer(t *testing.T) {
	p := prefixedProxy(t, "alpha")
	url := serveHTTPTest(t, p)
	hosts := map[string]func() *mcp.ClientSession{
		"stdio":            func() *mcp.ClientSession { return connectHost(t, p, "2025-11-25", nil) },
		"stdio 2025-03-26": func() *mcp.ClientSession { return connectHost(t, p, "2025-03-26", nil) },
		"sdk both sides":   func() *mcp.ClientSession { return connectHostFull(t, p, "2025-06-18") },
		"http":             func() *mcp.ClientSession { return connectHTTPHost(t, url, "2025-11-25", &mcp.ClientOptions{}) },
		"http 2026-07-28":  func() *mcp.ClientSession { return connectHTTPHost(t, url, "2026-07-28", &mcp.ClientOptions{}) },
	}
	for name, connect := range hosts {
		t.Run(name, func(t *testing.T) {
			via := connect()
			wantPrefixed(t, via, "alpha")
			callByPrefixedNames(t, via, "alpha")
			if _, err := via.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err == nil {
				t.Error("the server's own name echo was routed; want it unknown")
			}
		})
	}
	if framed(p) == 0 {
		t.Error("no call took the frame path")
	}
}

// TestPrefixNamesSeveralServers: with several servers the option changes
// nothing: the names are those auto gives.
func TestPrefixNamesSeveralServers(t *testing.T) {
	auto := connectHost(t, newTestProxy(t, "alpha", "beta"), "2025-11-25", nil)
	always := connectHost(t, prefixedProxy(t, "alpha", "beta"), "2025-11-25", nil)
	if diff := cmp.Diff(toolNames(t, auto), toolNames(t, always)); diff != "" {
		t.Errorf("tool names, auto (-) against always (+):\n%s", diff)
	}
	callByPrefixedNames(t, always, "beta")
}

// TestPrefixNamesAutoOneServer: by default one server's names are its own.
func TestPrefixNamesAutoOneServer(t *testing.T) {
	via := connectHost(t, newTestProxy(t, "alpha"), "2025-11-25", nil)
	if names := toolNames(t, via); !slices.Contains(names, "echo") || slices.Contains(names, "alpha__echo") {
		t.Errorf("tools %v: want the server's own names", names)
	}
}

func toolNames(t *testing.T, via *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range via.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// wantPrefixed fails unless every tool and prompt via lists carries
// server's prefix.
func wantPrefixed(t *testing.T, via *mcp.ClientSession, server string) {
	t.Helper()
	names := toolNames(t, via)
	for prompt, err := range via.Prompts(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, prompt.Name)
	}
	if !slices.Contains(names, server+"__echo") || !slices.Contains(names, server+"__greet") {
		t.Errorf("names %v: want %s__echo and %s__greet", names, server, server)
	}
	for _, n := range names {
		if len(n) <= len(server)+2 || n[:len(server)+2] != server+"__" {
			t.Errorf("name %q lacks the prefix %s__", n, server)
		}
	}
}

// callByPrefixedNames calls server's echo tool and greet prompt by their
// prefixed names.
func callByPrefixedNames(t *testing.T, via *mcp.ClientSession, server string) {
	t.Helper()
	res, err := via.CallTool(t.Context(), &mcp.CallToolParams{Name: server + "__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Fatalf("%s__echo: %v, %v", server, res, err)
	}
	prompt, err := via.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: server + "__greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(prompt.Messages) != 1 {
		t.Fatalf("%s__greet: %v, %v", server, prompt, err)
	}
}
