package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// TestEditKeepsOrder: an operator's edit of a request is forwarded with
// the free-form values in the order the edit has them (the order of the
// request the edit document was made from), through the canonical bytes
// the engine judges and the request decoded back from them.
func TestEditKeepsOrder(t *testing.T) {
	const schema = `{"type":"object","properties":{"zeta":{"type":"string","title":"Z"},"alpha":{"title":"A","type":"string"}},"required":["zeta"]}`
	for _, c := range []struct {
		k    *Kind
		edit string
		want []string
	}{
		{Elicitation, `{"message":"edited","requestedSchema":` + schema + `}`, []string{`"requestedSchema":` + schema}},
		{Sampling, `{"messages":[{"role":"user","content":{"type":"text","text":"edited"}}],"maxTokens":5,` +
			`"metadata":{"zeta":1,"alpha":2},"tools":[{"name":"lookup","inputSchema":` + schema + `}]}`,
			[]string{`"metadata":{"zeta":1,"alpha":2}`, `"inputSchema":` + schema}},
	} {
		judged, err := c.k.canonical(engine.StageRequest, []byte(c.edit))
		if err != nil {
			t.Fatal(err)
		}
		in, err := c.k.decodeRequest(judged)
		if err != nil {
			t.Fatal(err)
		}
		forwarded, _ := json.Marshal(in)
		for _, want := range c.want {
			if !strings.Contains(string(judged), want) || !strings.Contains(string(forwarded), want) {
				t.Errorf("%s: judged %s, forwarded %s; want both to hold %s", c.k.Name, judged, forwarded, want)
			}
		}
	}
}
