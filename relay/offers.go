package relay

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// What the firewall offers each upstream of a host:
// sampling, elicitation (in the modes the host declared) and roots (with
// listChanged as the host declared it), each only when the host declared
// it and the server's config allows it (servers.<name>.sampling,
// elicitation.enabled, roots.enabled). A session that serves one host is
// offered this at initialize; a 2026-07-28 upstream on every request, in
// its clientCapabilities _meta. An upstream is never offered what its host
// did not declare: the SDK's own defaults (a client declares
// roots.listChanged unless told otherwise, and elicitation when it has a
// handler) are overridden by always passing capabilities explicitly.

// offeredTo is h as upstream cfg may see it: what h declared, less what
// cfg withholds. The firewall asks h for that upstream only what this view
// declares, so a request of a kind the upstream was not offered fails as
// one the host cannot answer. What the engine reads (capabilities) stays
// what h itself declared.
func (h hostView) offeredTo(cfg Upstream) hostView {
	if h.declared == nil {
		h.declared = &declaredCaps{of: h.caps}
	}
	var c mcp.ClientCapabilities // a copy: pointers are shared, never written through
	if h.caps != nil {
		c = *h.caps
	}
	if !cfg.Sampling {
		c.Sampling = nil
	}
	if !cfg.Elicitation.Enabled {
		c.Elicitation = nil
	}
	if !cfg.Roots.Enabled {
		c.RootsV2, c.Roots.ListChanged = nil, false
	}
	h.caps = &c
	return h
}

// offer is what one upstream session is offered at initialize.
type offer struct {
	// sampling says a sampling handler is set: the host can sample, or an
	// operator answers for the server, or the session is the shared one
	// (see link.shared).
	sampling bool
	caps     *mcp.ClientCapabilities // exactly what the session declares
	modes    validate.Capabilities   // what validation allows its requests
}

// sessionOffer is what cfg's session on l is offered at initialize. The
// shared link's sessions serve the lists of every 2026-07-28 host and ask
// none of them (a push on one is refused): they are offered what config
// allows, so that tools a server registers only for clients with sampling,
// elicitation or roots are listed, as a host declaring them would see them.
func sessionOffer(cfg Upstream, l *link) offer {
	h := l.host.offeredTo(cfg)
	o := offer{caps: &mcp.ClientCapabilities{}, modes: capsOf(h)}
	o.sampling = cfg.Sampling && (h.canSample() || cfg.OperatorAnswer || l.shared)
	if o.sampling {
		o.caps.Sampling = advertised(o.modes)
	}
	o.caps.Elicitation = mirrorElicitation(h.caps.Elicitation)
	o.caps.RootsV2 = mirrorRoots(h.caps.RootsV2)
	if l.shared {
		if cfg.Elicitation.Enabled {
			o.caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
		}
		if cfg.Roots.Enabled {
			o.caps.RootsV2 = &mcp.RootCapabilities{}
		}
	}
	o.modes.Form, o.modes.URL = elicitationModes(o.caps.Elicitation)
	if o.caps.RootsV2 != nil {
		o.caps.Roots.ListChanged = o.caps.RootsV2.ListChanged
	}
	return o
}

// requestOffer is what a 2026-07-28 upstream is offered on one request
// from h, sent as its clientCapabilities _meta. An operator answering for
// the server stands in for an older host that cannot sample; a 2026-07-28
// host is only ever asked through its own call.
func requestOffer(cfg Upstream, h hostView) *mcp.ClientCapabilities {
	h = h.offeredTo(cfg)
	c := &mcp.ClientCapabilities{}
	switch {
	case h.canSample():
		c.Sampling = advertised(capsOf(h))
	case cfg.Sampling && cfg.OperatorAnswer && !h.modern():
		c.Sampling = &mcp.SamplingCapabilities{}
	}
	c.Elicitation = mirrorElicitation(h.caps.Elicitation)
	c.RootsV2 = mirrorRoots(h.caps.RootsV2)
	return c
}

// mirrorElicitation is a copy of the elicitation capability a host
// declared, its modes as declared: an empty object (form only, in every
// revision) stays empty. Nil for none.
func mirrorElicitation(e *mcp.ElicitationCapabilities) *mcp.ElicitationCapabilities {
	if e == nil {
		return nil
	}
	out := &mcp.ElicitationCapabilities{}
	if e.Form != nil {
		out.Form = &mcp.FormElicitationCapabilities{}
	}
	if e.URL != nil {
		out.URL = &mcp.URLElicitationCapabilities{}
	}
	return out
}

// mirrorRoots is a copy of the roots capability a host declared; nil for
// none.
func mirrorRoots(r *mcp.RootCapabilities) *mcp.RootCapabilities {
	if r == nil {
		return nil
	}
	return &mcp.RootCapabilities{ListChanged: r.ListChanged}
}

// elicitationModes reads an elicitation capability as the spec does: an
// object naming neither mode means form only (the revisions before modes
// existed).
func elicitationModes(e *mcp.ElicitationCapabilities) (form, url bool) {
	if e == nil {
		return false, false
	}
	return e.Form != nil || e.URL == nil, e.URL != nil
}

// wireCapabilities is c as it goes on the wire, roots read from RootsV2
// (the deprecated Roots field is not a pointer and would always say
// roots): sampling, elicitation and roots, each only when offered.
func wireCapabilities(c *mcp.ClientCapabilities) map[string]any {
	out := map[string]any{}
	if c.Sampling != nil {
		out["sampling"] = c.Sampling
	}
	if c.Elicitation != nil {
		out["elicitation"] = c.Elicitation
	}
	if c.RootsV2 != nil {
		out["roots"] = c.RootsV2
	}
	return out
}

// offerKey is c as a stable string, for keying what a session offered.
func offerKey(c *mcp.ClientCapabilities) string {
	b, _ := json.Marshal(wireCapabilities(c)) // map keys sorted; only SDK structs inside
	return string(b)
}
