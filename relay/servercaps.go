package relay

import (
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// knownCapabilities remembers what each configured server offered the
// last time the firewall started it, for each way it may be started: at
// a revision, offered sampling (with tools, with context), elicitation (in
// which modes) and roots or not. A host
// served over HTTP is told at initialize what its upstreams will offer
// without starting them: they start on its first request that needs them,
// so that an initialize costs no process (see attachHost).
type knownCapabilities struct {
	mu   sync.Mutex
	caps map[string]*mcp.ServerCapabilities
}

// startKey is what a server's session depends on: the revision asked for
// and what it is offered (sessionOffer): sampling, elicitation and roots,
// whose offer may change the tools it registers.
func startKey(cfg Upstream, era string, l *link) string {
	return fmt.Sprintf("%s\x00%s\x00%s", cfg.Name, requestedEra(cfg.Era, era), offerKey(sessionOffer(cfg, l).caps))
}

func (k *knownCapabilities) remember(cfg Upstream, era string, l *link, c *mcp.ServerCapabilities) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.caps == nil {
		k.caps = map[string]*mcp.ServerCapabilities{}
	}
	k.caps[startKey(cfg, era, l)] = c
}

// lookup returns what every server offered when last started as l would
// start it, or false when one has not been started so yet.
func (k *knownCapabilities) lookup(cfgs []Upstream, l *link) ([]*mcp.ServerCapabilities, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]*mcp.ServerCapabilities, 0, len(cfgs))
	for _, cfg := range cfgs {
		c, ok := k.caps[startKey(cfg, l.host.era, l)]
		if !ok {
			return nil, false
		}
		out = append(out, c)
	}
	return out, true
}

// advertised is what a host is told at initialize: what l's upstreams
// offer when they run; else what they offered when last started alike;
// else, before any was, everything the firewall relays (a list the
// upstreams lack comes back empty, a completion request fails with
// -32603), rather than hide a feature for the whole session.
func (p *Proxy) advertised(l *link) *mcp.ServerCapabilities {
	if l.started.Load() {
		return l.mergedCapabilities()
	}
	if all, ok := p.known.lookup(p.cfg.Upstreams, l); ok {
		return mergeCapabilities(all)
	}
	return relayedCapabilities()
}

// relayedCapabilities is everything the firewall relays, list changes
// included.
func relayedCapabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Prompts: &mcp.PromptCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true}, Completions: &mcp.CompletionCapabilities{}}
}

// mergeCapabilities offers the host what any upstream offers (tools,
// prompts, resources, completions, and list changes, which are relayed)
// and nothing the firewall cannot relay.
func mergeCapabilities(all []*mcp.ServerCapabilities) *mcp.ServerCapabilities {
	out := &mcp.ServerCapabilities{}
	for _, c := range all {
		if c == nil {
			continue
		}
		if c.Tools != nil {
			out.Tools = &mcp.ToolCapabilities{ListChanged: c.Tools.ListChanged || out.Tools != nil && out.Tools.ListChanged}
		}
		if c.Prompts != nil {
			out.Prompts = &mcp.PromptCapabilities{ListChanged: c.Prompts.ListChanged || out.Prompts != nil && out.Prompts.ListChanged}
		}
		if c.Resources != nil {
			out.Resources = &mcp.ResourceCapabilities{ListChanged: c.Resources.ListChanged || out.Resources != nil && out.Resources.ListChanged}
		}
		if c.Completions != nil {
			out.Completions = &mcp.CompletionCapabilities{}
		}
	}
	return out
}
