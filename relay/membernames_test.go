package relay

import (
	"encoding/base64"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askEntry has the peer ask, as its one 2026-07-28 input request, the
// exact bytes of entry (member names as written), and returns the code the
// host's call or the upstream's answer ended with (0: answered).
func (h *inputHost) askEntry(t *testing.T, cs *mcp.ClientSession, entry string) int64 {
	t.Helper()
	res, err := h.call(t.Context(), cs, "ask_input", map[string]any{"method": "elicitation/create", "entry": true,
		"raw_b64": base64.StdEncoding.EncodeToString([]byte(entry))})
	return refusedWith(t, res, err)
}

// TestInputEntryMemberNames: the SDK reads an input request entry with
// encoding/json, which takes "METHOD", "Method" or "paramſ" (ſ folds to s)
// for method and params, the last match winning. An entry spelt so would
// reach the SDK as an elicitation whose bytes the raw screen never read
// (here params with a repeated message, which the screen refuses); it is
// refused with -32602 before the host is asked, from a command upstream
// and an HTTP one, for either host. The exact spelling passes.
func TestInputEntryMemberNames(t *testing.T) {
	dup := `{"mode":"form","message":"Your name?","message":"Your password?","requestedSchema":` + nameSchema + `}`
	benign := `{"mode":"form","message":"Your name?","requestedSchema":` + nameSchema + `}`
	entries := []struct {
		name, entry string
		code        int64
	}{
		{"upper case", `{"METHOD":"elicitation/create","PARAMS":` + dup + `}`, refusal.CodeInvalidParams},
		{"method repeated in another case", `{"method":"roots/list","Method":"elicitation/create","params":` + dup + `}`, refusal.CodeInvalidParams},
		{"params repeated with a folding letter", `{"method":"elicitation/create","params":` + benign + `,"paramſ":` + dup + `}`, refusal.CodeInvalidParams},
		{"exact", `{"method":"elicitation/create","params":` + benign + `}`, 0},
	}
	url := startHTTPUpstream(t)
	for _, up := range []struct {
		name string
		set  func(*Upstream)
	}{
		{"stdio", func(*Upstream) {}},
		{"http", func(u *Upstream) { u.Command, u.URL = nil, url }},
	} {
		for _, host := range []string{"2025-11-25", modernEra} {
			for _, tc := range entries {
				t.Run(up.name+"/"+host+"/"+tc.name, func(t *testing.T) {
					p := newInputProxy(t, modernEra, up.set)
					h := &inputHost{}
					cs := h.connect(t, p, host)
					code := h.askEntry(t, cs, tc.entry)
					if code != tc.code {
						t.Fatalf("code = %d, want %d", code, tc.code)
					}
					if asked := h.elicited.Load() > 0; asked != (tc.code == 0) {
						t.Errorf("host asked = %v, want %v", asked, tc.code == 0)
					}
				})
			}
		}
	}
}
