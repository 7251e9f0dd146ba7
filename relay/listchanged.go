package relay

import (
	"context"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The firewall relays lists at the method level, so its own server's
// registry stays empty and is never shown to a host. Adding a sentinel to
// it and removing it again is how a list_changed notification reaches
// every host through the SDK, on each host's own channel (the session for
// older hosts, subscriptions/listen for 2026-07-28 ones). A host told that
// a list changed lists again and gets the upstreams' lists as they are now.
const sentinel = "mcpx-fw.list-changed"

var sentinelSchema = map[string]any{"type": "object"}

// toolsChanged tells the hosts that an upstream's tool list changed.
func (p *Proxy) toolsChanged(context.Context, *mcp.ToolListChangedRequest) {
	p.srv.AddTool(&mcp.Tool{Name: sentinel, InputSchema: sentinelSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, refusal.Internal("not a tool")
	})
	p.srv.RemoveTools(sentinel)
}

// promptsChanged tells the hosts that an upstream's prompt list changed.
func (p *Proxy) promptsChanged(context.Context, *mcp.PromptListChangedRequest) {
	p.srv.AddPrompt(&mcp.Prompt{Name: sentinel}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, refusal.Internal("not a prompt")
	})
	p.srv.RemovePrompts(sentinel)
}

// resourcesChanged tells the hosts that an upstream's resource list
// changed, after dropping what u claimed from its link's resource index,
// so the next request about a resource lists u again (owners.go).
func (p *Proxy) resourcesChanged(_ context.Context, u *upstream, _ *mcp.ResourceListChangedRequest) {
	u.link.resources.forget(u)
	p.notifyResources()
}

// notifyResources tells the hosts that a resource list changed.
func (p *Proxy) notifyResources() {
	uri := "mcpx-fw:" + sentinel
	p.srv.AddResource(&mcp.Resource{URI: uri, Name: sentinel}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, refusal.Internal("not a resource")
	})
	p.srv.RemoveResources(uri)
}
