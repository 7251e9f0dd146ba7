package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hostile elicitation corpus (testdata/requests/hostile/elicitation,
// checked against validate.Elicitation in validate/) end to end: each
// request asked of the real `mcpx-fw serve` by the test upstream, pushed
// (ask) on a legacy session and as a 2026-07-28 input request (ask_input),
// under the shipped policies. A structural violation is -32602 and a deny
// a decline (legacy) or -1 (2026-07-28), the host never asked; what passes
// or a person approves reaches the host once.
//
// The test upstream decodes the params it is given into the SDK's
// ElicitParams (the schema kept as written), so a fixture that only
// exists as exact bytes cannot be sent this way: hostileElicitSkipped.

// hostileElicitation is one fixture of the corpus, as this test reads it.
type hostileElicitation struct {
	name        string
	About       string               `json:"about"`
	Eras        []string             `json:"eras"`
	Era         string               `json:"era"`
	WantCode    *int64               `json:"want_code"`
	WantOutcome string               `json:"want_outcome"`
	Policy      string               `json:"policy"`
	Generate    map[string]generator `json:"generate"`
	Params      json.RawMessage      `json:"params"`
	ParamsText  *string              `json:"paramsText"`
}

// hostileElicitSkipped are the fixtures the test upstream cannot send as
// written, and why.
var hostileElicitSkipped = map[string]string{
	"duplicate-message-key":    "a duplicate key does not survive the upstream's decoding",
	"schema-bomb-depth-100000": "deeper than the upstream's JSON decoder takes a tool argument",
	"url-mode-not-offered":     "needs a host that declares form mode only",
}

func loadHostileElicitation(t *testing.T) []hostileElicitation {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoPath(t, "testdata/requests/hostile/elicitation"), "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no hostile elicitation fixtures: %v", err)
	}
	var out []hostileElicitation
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var c hostileElicitation
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		c.name = strings.TrimSuffix(filepath.Base(p), ".json")
		if _, skip := hostileElicitSkipped[c.name]; !skip {
			out = append(out, c)
		}
	}
	return out
}

// cells are the calls that send c to the upstreams of hostileElicitServers
// in the eras it names, and what each must come to.
func (c hostileElicitation) cells(t *testing.T) []eraCell {
	raw := (&hostileCase{name: c.name, Params: c.Params, ParamsText: c.ParamsText, Generate: c.Generate}).bytes(t)
	eras := c.Eras
	if len(eras) == 0 {
		eras = []string{c.Era}
	}
	legacy, modern := false, false
	for _, e := range eras {
		if e == "2026-07-28" {
			modern = true
		} else {
			legacy = true
		}
	}
	var out []eraCell
	add := func(era, tool string, refused func(int64) func(elicitOutcome) bool, declined func(elicitOutcome) bool) {
		cell := eraCell{name: c.name + "/" + era, call: elicitCall{Name: tool,
			Arguments: map[string]any{"method": "elicitation/create", "params": json.RawMessage(raw)}}}
		switch code := c.code(); {
		case code == -32602:
			cell.check, cell.want = refused(-32602), "-32602, unasked"
		case code == -1:
			cell.check, cell.want = declined, "a deny, unasked"
		default:
			cell.check, cell.want, cell.asked = reachedHost, "the host's answer", 1
			// The fixture names the outcome; where its policy note leaves
			// the choice open ("pass or review"), either is right.
			cell.approve = c.WantOutcome == "escalate" && !strings.HasPrefix(c.Policy, "pass or review")
			cell.mayHold = c.WantOutcome == "escalate" && !cell.approve
		}
		out = append(out, cell)
	}
	if legacy {
		add("legacy upstream", "leg__ask", askRefused, askGot("decline"))
	}
	if modern {
		add("2026 upstream", "new__ask_input", failedWith, failedWith(-1))
	}
	return out
}

func (c hostileElicitation) code() int64 {
	if c.WantCode == nil {
		return 0
	}
	return *c.WantCode
}

// reachedHost is a check that the upstream got the host's answer, not a
// refusal of the firewall's.
func reachedHost(o elicitOutcome) bool {
	a, ok := asked(o)
	return ok && a.Error == nil && a.Result != nil
}

func TestHostileElicitationThroughFirewall(t *testing.T) {
	servers := "  leg:\n" + serverEntry([]string{upstreamBinary}, "    protocol: legacy\n") +
		"  new:\n" + serverEntry([]string{upstreamBinary}, "    protocol: 2026-07-28\n")
	var cells []eraCell
	for _, c := range loadHostileElicitation(t) {
		cells = append(cells, c.cells(t)...)
	}
	// One host of each era; each asks for every fixture in turn, so a
	// review that should not be made holds one call for the review
	// timeout, not the whole test.
	for _, h := range elicitHosts() {
		if h.npm {
			continue
		}
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			runCells(t, h, testConfig(t, repoPath(t, "policies"), 20*time.Second, servers), cells)
		})
	}
}
