package relay

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// defaultOffers is u configured as cmd configures a server that says
// nothing of sampling, elicitation or roots: each offered when the host
// declares it.
func defaultOffers(u Upstream) Upstream {
	u.Sampling, u.Elicitation.Enabled, u.Roots.Enabled = true, true, true
	return u
}

// offeredUpstream calls the peer's client_info through host and returns the
// capabilities the upstream saw: its InitializeParams on a legacy session,
// the request's clientCapabilities _meta on a 2026-07-28 one.
func offeredUpstream(t *testing.T, host *mcp.ClientSession) (string, string) {
	t.Helper()
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "client_info", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var got peer.ClientInfo
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	return got.ProtocolVersion, compact(got.Capabilities)
}

// TestOfferMirrorsHost: an upstream is offered sampling, elicitation (its
// modes as the host declared them, an empty object staying empty: form
// only) and roots (listChanged as declared) exactly when the host declared
// them and the server's config allows, at initialize for a legacy session
// and on each request for a 2026-07-28 one; never the SDK's defaults.
func TestOfferMirrorsHost(t *testing.T) {
	form := &mcp.FormElicitationCapabilities{}
	url := &mcp.URLElicitationCapabilities{}
	hosts := []struct {
		name     string
		declared mcp.ClientCapabilities
		offered  string // when config allows everything
	}{
		{"nothing", mcp.ClientCapabilities{}, `{}`},
		{"elicitation form", mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: form}}, `{"elicitation":{"form":{}}}`},
		{"elicitation form+url", mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: form, URL: url}}, `{"elicitation":{"form":{},"url":{}}}`},
		{"elicitation url", mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: url}}, `{"elicitation":{"url":{}}}`},
		{"elicitation empty", mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, `{"elicitation":{}}`},
		{"roots", mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}, `{"roots":{"listChanged":true}}`},
		{"roots without listChanged", mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}, `{"roots":{}}`},
		{"all", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{Form: form, URL: url},
			RootsV2: &mcp.RootCapabilities{ListChanged: true}}, `{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`},
	}
	configs := []struct {
		name    string
		enabled bool
	}{{"enabled", true}, {"disabled", false}}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		for _, cfg := range configs {
			for _, h := range hosts {
				t.Run(era+"/"+cfg.name+"/"+h.name, func(t *testing.T) {
					p := newTestProxy(t, "peer")
					u := &p.cfg.Upstreams[0]
					u.Sampling, u.Elicitation.Enabled, u.Roots.Enabled = cfg.enabled, cfg.enabled, cfg.enabled
					declared := h.declared
					host := connectHost(t, p, era, &mcp.ClientOptions{Capabilities: &declared})
					version, got := offeredUpstream(t, host)
					if version != era {
						t.Fatalf("upstream spoke %s, want %s", version, era)
					}
					want := h.offered
					if !cfg.enabled {
						want = `{}`
					}
					if got != want {
						t.Errorf("upstream was offered %s, want %s", got, want)
					}
				})
			}
		}
	}
}

// TestSamplingOff: servers.<name>.sampling: false offers the server no
// sampling even when the host can sample, and a sampling request it makes
// anyway is refused as one for a capability it lacks, never asked of the
// host: -32602 for a push; for a 2026-07-28 input request, the host's call
// fails with -32602 (legacy host) or -32021 (2026-07-28 host).
func TestSamplingOff(t *testing.T) {
	params := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`)
	for _, tc := range []struct {
		name, era, protocol, tool string
		code                      int64
		offered                   string
	}{
		{"push", "2025-11-25", "", "sample", -32602, `{}`},
		{"input request, legacy host", "2025-11-25", "2026-07-28", "sample_input", -32602, `{}`},
		{"input request, 2026-07-28 host", "2026-07-28", "", "sample_input", -32021, `{}`},
		// The call runs on the shared session (see sessionOffer), which
		// asks no host: offered what config allows, sampling not.
		{"push behind a 2026-07-28 host", "2026-07-28", "legacy", "sample", -32602, `{"elicitation":{"form":{},"url":{}},"roots":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestProxy(t, "peer")
			p.cfg.Upstreams[0].Sampling = false
			p.cfg.Upstreams[0].Era = tc.protocol
			var asked atomic.Int32
			host := connectHost(t, p, tc.era, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
				CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
					asked.Add(1)
					return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
				}})
			if _, offered := offeredUpstream(t, host); offered != tc.offered {
				t.Errorf("upstream was offered %s, want %s", offered, tc.offered)
			}
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"params": params}})
			if code := refusedWith(t, res, err); code != tc.code {
				t.Errorf("refused with %d (err %v), want %d", code, err, tc.code)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the host was asked %d times", n)
			}
		})
	}
}

// TestStartKeyByOffer: what a server offered when started is remembered
// per offer (see advertised), so hosts that declared different
// elicitation modes or roots never share what one of them was told.
func TestStartKeyByOffer(t *testing.T) {
	hosts := map[string]*mcp.ClientCapabilities{
		"nothing":   {},
		"sampling":  {Sampling: &mcp.SamplingCapabilities{}},
		"form":      {Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		"form+url":  {Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		"roots":     {RootsV2: &mcp.RootCapabilities{}},
		"roots+lc":  {RootsV2: &mcp.RootCapabilities{ListChanged: true}},
		"elicit {}": {Elicitation: &mcp.ElicitationCapabilities{}},
	}
	cfg := defaultOffers(Upstream{Name: "a"})
	seen := map[string]string{}
	for name, caps := range hosts {
		key := startKey(cfg, "2025-11-25", newLink(hostView{era: "2025-11-25", caps: caps}))
		if other, dup := seen[key]; dup {
			t.Errorf("hosts %q and %q share a start key", name, other)
		}
		seen[key] = name
	}
	off := cfg
	off.Elicitation.Enabled, off.Roots.Enabled = false, false
	all := newLink(hostView{era: "2025-11-25", caps: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}, RootsV2: &mcp.RootCapabilities{}}})
	if startKey(off, "2025-11-25", all) != startKey(off, "2025-11-25", newLink(hostView{era: "2025-11-25"})) {
		t.Error("a server offered neither elicitation nor roots starts differently for hosts that differ only in those")
	}
}
