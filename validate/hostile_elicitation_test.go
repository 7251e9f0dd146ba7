package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostileElicitation is one file of testdata/requests/hostile/elicitation
// (see the hostile README): an elicitation request an attacking upstream
// sends, and what validation must say of it.
type hostileElicitation struct {
	name       string
	Eras       []string             `json:"eras"`
	Caps       fixtureCaps          `json:"caps"`
	WantRules  []string             `json:"want_rules"`
	WantCode   *int64               `json:"want_code"`
	Params     json.RawMessage      `json:"params"`
	ParamsText *string              `json:"paramsText"`
	Generate   map[string]hostilGen `json:"generate"`
}

// hostilGen is the README's generator: prefix, times copies of raw joined
// by sep, times copies of close, suffix; "{i}" is the copy's index.
type hostilGen struct {
	Prefix string `json:"prefix"`
	Raw    string `json:"raw"`
	Times  int    `json:"times"`
	Sep    string `json:"sep"`
	Close  string `json:"close"`
	Suffix string `json:"suffix"`
}

func (g hostilGen) expand() []byte {
	var b bytes.Buffer
	b.WriteString(g.Prefix)
	for i := range g.Times {
		if i > 0 {
			b.WriteString(g.Sep)
		}
		b.WriteString(strings.ReplaceAll(g.Raw, "{i}", strconv.Itoa(i)))
	}
	b.WriteString(strings.Repeat(g.Close, g.Times))
	b.WriteString(g.Suffix)
	return b.Bytes()
}

// bytes builds the exact params.
func (h hostileElicitation) bytes(t testing.TB) []byte {
	raw := []byte(h.Params)
	if h.ParamsText != nil {
		raw = []byte(*h.ParamsText)
	}
	for name, g := range h.Generate {
		ph := []byte(strconv.Quote("@" + name))
		if bytes.Count(raw, ph) != 1 {
			t.Fatalf("%s: generator %s needs exactly one %s", h.name, name, ph)
		}
		raw = bytes.Replace(raw, ph, g.expand(), 1)
	}
	return raw
}

func loadHostileElicitation(t testing.TB) []hostileElicitation {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "requests", "hostile", "elicitation", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no hostile elicitation requests: %v", err)
	}
	var out []hostileElicitation
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var h hostileElicitation
		if err := json.Unmarshal(data, &h); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h.name = filepath.Base(name)
		out = append(out, h)
	}
	return out
}

// elicitationHostileSeeds are the stored (not generated) hostile
// elicitation requests, for FuzzElicitation.
func elicitationHostileSeeds(t testing.TB) []hostileSeed {
	var out []hostileSeed
	for _, h := range loadHostileElicitation(t) {
		if h.Generate == nil {
			out = append(out, hostileSeed{params: h.bytes(t), eras: h.Eras, caps: h.Caps})
		}
	}
	return out
}

// TestHostileElicitation: every file of the hostile elicitation corpus, in
// every era it names, gets exactly want_rules from Elicitation, within a
// few seconds whatever its size; a file refused as invalid (-32602) names
// rules, one left to policy names none.
func TestHostileElicitation(t *testing.T) {
	cases := loadHostileElicitation(t)
	if len(cases) < 25 {
		t.Errorf("%d hostile elicitation requests, want at least 25", len(cases))
	}
	for _, h := range cases {
		raw := h.bytes(t)
		if invalid := h.WantCode != nil && *h.WantCode == -32602; invalid != (len(h.WantRules) > 0) {
			t.Errorf("%s: want_code -32602 goes with want_rules, and only it", h.name)
		}
		for _, era := range h.Eras {
			opt := Options{Era: era, Caps: Capabilities{Form: h.Caps.Form, URL: h.Caps.URL}}
			start := time.Now()
			_, vs := Elicitation(raw, opt)
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("%s@%s: %d bytes took %v", h.name, era, len(raw), took)
			}
			if got, want := ruleSet(vs), sortedSet(h.WantRules); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("%s@%s: rules %q, want %q: %+v", h.name, era, got, want, vs[:min(len(vs), 5)])
			}
		}
	}
}
