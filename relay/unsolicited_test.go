package relay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUnsolicitedAnswersDropped: a 2026-07-28 host's roots and elicitation
// answers on its first call, which the firewall never asked for, never
// reach the 2026-07-28 upstream, though its tools would take them: the
// upstream asks by input requests instead, and gets the roots narrowed to
// servers.<name>.roots.allow and an answer checked against its request.
func TestUnsolicitedAnswersDropped(t *testing.T) {
	allowed := []*mcp.Root{{URI: "file:///work/a", Name: "a"}, {URI: "file:///secret"}}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		answers    mcp.InputResponseMap
		want, leak string
	}{
		{"roots", "roots_input", map[string]any{},
			mcp.InputResponseMap{"roots": &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///work/a"}, {URI: "file:///secret/unasked"}}}},
			"file:///work/a", "file:///secret"},
		{"elicitation", "ask_input", map[string]any{"method": "elicitation/create", "params": json.RawMessage(`{"message":"hello","requestedSchema":` + nameSchema + `}`)},
			mcp.InputResponseMap{"a": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": strings.Repeat("x", 40), "extra": "leak"}}},
			`"name":"Ada"`, "leak"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newInputProxy(t, "", func(u *Upstream) { u.Roots.Allow = []string{"file:///work/a"} })
			h := &inputHost{roots: allowed}
			cs := h.connect(t, p, modernEra)
			res, err := h.callWith(t.Context(), cs, tc.tool, tc.args, tc.answers)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Content[0].(*mcp.TextContent).Text
			if strings.Contains(got, tc.leak) || !strings.Contains(got, tc.want) {
				t.Errorf("upstream got %s, want %s and no %s", got, tc.want, tc.leak)
			}
		})
	}
}
