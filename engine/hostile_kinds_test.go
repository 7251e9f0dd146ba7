package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// hostileFixture is the part of a hostile elicitation fixture the engine
// reads: where it runs and what the firewall must decide.
type hostileFixture struct {
	Eras        []string              `json:"eras"`
	Caps        validate.Capabilities `json:"caps"`
	WantOutcome string                `json:"want_outcome"`
	Params      json.RawMessage       `json:"params"`
	ParamsText  *string               `json:"paramsText"`
	Generate    json.RawMessage       `json:"generate"`
}

// The hostile elicitation corpus, decided by the shipped policies for a
// configured server without allowed hosts, in every era each payload
// names: each reaches the outcome its fixture expects (a secret-asking
// form denied, a homograph held, a javascript: URL refused...).
func TestHostileElicitationOutcomes(t *testing.T) {
	e, _ := newTestEngine(t, Config{})
	files, err := filepath.Glob("../testdata/requests/hostile/elicitation/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no hostile elicitation fixtures: %v", err)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f hostileFixture
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if f.Generate != nil {
			continue // a size or depth bomb: validation's own tests build and refuse those
		}
		params := []byte(f.Params)
		if f.ParamsText != nil {
			params = []byte(*f.ParamsText)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		for _, era := range f.Eras {
			s := Request{Kind: KindElicitation, Server: Server{Name: "notes", Label: "Notes", Era: era},
				Host: Host{Era: era}, Caps: f.Caps, Params: params}
			v := e.Decide(t.Context(), s)
			if v.Outcome.String() != f.WantOutcome {
				t.Errorf("%s in %s: %v %v %v, want %s", name, era, v.Outcome, v.ReasonCodes(), v.Err, f.WantOutcome)
			}
		}
	}
}
