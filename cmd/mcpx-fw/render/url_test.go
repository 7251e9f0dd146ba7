package render

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// TestShowHostWarningsAgreeWithFacts: review show warns of a punycode
// (or international) host, and of a label mixing scripts, exactly when
// the facts the policy reads (input.facts.elicitation.url) say punycode
// and mixed_script, so a reviewer is told what made the policy hold the
// URL. The facts are taken from the engine's own input document, through
// Preview on the shipped policies.
func TestShowHostWarningsAgreeWithFacts(t *testing.T) {
	e, err := engine.New(t.Context(), engine.Config{Policy: engine.PolicyConfig{Dir: "../../../policies"}}, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	hosts := []struct{ name, host string }{
		{"ascii", "auth.example.com"},
		{"ascii in capitals", "Auth.Example.COM"},
		{"digits", "123.example.com"},
		{"an IP address", "127.0.0.1"},
		{"punycode, Latin", "xn--bcher-kva.example"},
		{"punycode in capitals", "XN--BCHER-KVA.example"},
		{"Unicode, Latin", "bücher.example"},
		{"Cyrillic a in Latin", "exаmple.com"},
		{"Cyrillic a in Latin, as punycode", "xn--pple-43d.com"},
		{"Cyrillic only", "пример.рф"},
		{"Greek", "αβγ.example"},
		{"Greek omicron in Latin", "gοogle.com"},
		{"Han, Katakana and Latin", "東京タワーmap.jp"},
		{"Hiragana and Han", "例え.jp"},
		{"Hangul and Han", "한국中.kr"},
		{"Bopomofo and Han", "ㄅ中.tw"},
		{"Hangul with Katakana", "한タ.jp"},
		{"Cyrillic with Greek", "аβ.example"},
		{"Arabic-Indic digits in Arabic", "مثال٣.example"},
		{"mixed labels each of one script", "пример.example.com"},
		{"the mix in a later label", "example.exаmple.com"},
		{"Devanagari with its vowel signs", "हिन्दी.example"},
		{"a Cyrillic combining mark on Latin (a mark counts for no script)", "pa\u0483ypal.com"},
		{"IDNA refuses it, and it mixes scripts", "exаmple_.com"},
		{"IDNA refuses its punycode", "xn--zz.example"},
	}
	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			req, _ := json.Marshal(map[string]any{"mode": "url", "message": "m", "url": "https://" + h.host + "/", "elicitationId": "e"})
			_, input := e.Preview(t.Context(), engine.StageRequest, engine.Request{Kind: engine.KindElicitation,
				Caps: validate.Capabilities{URL: true}, Params: req}, nil, engine.Usage{})
			facts, _ := input["facts"].(map[string]any)
			url, ok := facts["url"].(map[string]any)
			if !ok {
				t.Fatalf("no URL facts for %q (the request was refused?): %v", h.host, input["violations"])
			}
			show := showItem(rendertest.KindItem(t, "elicitation", string(req), ""), false, 400)
			warned := map[string]bool{
				"punycode":     strings.Contains(show, "Warning: the host is written in punycode") || strings.Contains(show, "Warning: the host is an international name"),
				"mixed_script": strings.Contains(show, "Warning: the host mixes scripts"),
			}
			for fact, w := range warned {
				if url[fact] != w {
					t.Errorf("%q: facts say %s=%v, show warns: %v\n%s", h.host, fact, url[fact], w, show)
				}
			}
		})
	}
}
