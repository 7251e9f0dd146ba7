package demopeer

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectInMemory joins a demo host to the demo upstream without a
// firewall between them.
func connectInMemory(t *testing.T, opts HostOptions) *Host {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := newServer().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	h := &Host{}
	if err := h.connect(t.Context(), ct, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.session.Close() })
	return h
}

// TestUpstreamOffersOnlyTheDemosTools: the demo upstream, which ships in
// mcpx-fw, offers its two tools and nothing else: no prompt, no resource,
// no tool of the test peers' (raw bytes, floods, attacks).
func TestUpstreamOffersOnlyTheDemosTools(t *testing.T) {
	h := connectInMemory(t, HostOptions{Sample: fixed(`{}`), Elicit: fixed(`{}`)})
	var names []string
	for tool, err := range h.session.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if want := []string{"elicit", "sample"}; !slices.Equal(slices.Sorted(slices.Values(names)), want) || !slices.Equal(slices.Sorted(slices.Values(Tools)), want) {
		t.Errorf("tools %q (Tools %q), want exactly %q", names, Tools, want)
	}
	caps := h.session.InitializeResult().Capabilities
	if caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
		t.Errorf("the demo upstream offers more than tools: %+v", caps)
	}
}

func fixed(answer string) Answer {
	return func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(answer), nil }
}

// TestHostAnswersThroughUpstream: what the upstream pushes reaches the
// host's functions, and their answers come back as the tools' outcomes;
// each elicitation is counted, and a refused one comes back as its error.
func TestHostAnswersThroughUpstream(t *testing.T) {
	h := connectInMemory(t, HostOptions{
		Sample: fixed(`{"role":"assistant","model":"m","content":{"type":"text","text":"hi"}}`),
		Elicit: fixed(`{"action":"accept","content":{"name":"Ada"}}`),
	})
	got, err := h.Sample(t.Context(), json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":10}`))
	if err != nil || got.Error != nil || !strings.Contains(string(got.Result), `"text":"hi"`) {
		t.Errorf("Sample = %+v, %v; want the host's completion", got, err)
	}
	form := `{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`
	if got, err := h.Elicit(t.Context(), json.RawMessage(form)); err != nil || got.Error != nil || string(got.Result) != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Errorf("Elicit(form) = %+v, %v", got, err)
	}
	bad := `{"mode":"form","message":"Age?","requestedSchema":{"type":"object","properties":{"age":{"type":"integer"}},"required":["age"]}}`
	if got, err := h.Elicit(t.Context(), json.RawMessage(bad)); err != nil || got.Error == nil {
		t.Errorf("Elicit of an answer that misses the schema = %+v, %v; want the upstream to report its error", got, err)
	}
	if n := h.Elicited(); n != 2 {
		t.Errorf("Elicited = %d, want 2", n)
	}
}
