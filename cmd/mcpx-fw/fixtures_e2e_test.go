package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// requestFixture is one file of testdata/requests (see its README).
type requestFixture struct {
	name       string
	Era        string   `json:"era"`
	Eras       []string `json:"eras"`
	Caps       struct{ Tools, Context bool }
	Limits     json.RawMessage `json:"limits"`
	Want       []string        `json:"want"`
	Params     json.RawMessage `json:"params"`
	ParamsText *string         `json:"paramsText"`
}

// crossesTheWire says whether a fixture can be sent by a real upstream to
// the firewall: the bytes must form a JSON value (or the frame itself is
// broken), the era must be one a host negotiates, and the firewall runs
// with the default limits.
func (f requestFixture) crossesTheWire() bool {
	eras := []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}
	return f.ParamsText == nil && len(f.Limits) == 0 && slices.Contains(eras, f.Era) && json.Valid(f.Params)
}

// sampleRaw sends raw the way an upstream of f's era asks for a
// completion: a push up to 2025-11-25, an input request after.
func sampleRaw(t *testing.T, host *peer.Host, f requestFixture) (*peer.SampleOutcome, error) {
	if f.Era >= "2026-07-28" {
		return host.SampleInputRaw(t.Context(), f.Params)
	}
	return host.SampleRaw(t.Context(), f.Params)
}

func loadFixtures(t *testing.T, dir string) []requestFixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoPath(t, "testdata/requests"), dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	var out []requestFixture
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f requestFixture
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		f.name = strings.TrimSuffix(filepath.Base(p), ".json")
		for _, era := range append([]string{f.Era}, f.Eras...) {
			if era != "" {
				g := f
				g.Era = era
				out = append(out, g)
			}
		}
	}
	return out
}

// TestInvalidFixturesCrossTheFirewall sends every invalid request fixture
// that a real upstream can put on the wire through the real firewall, as
// raw bytes, in every era it applies to (pushed up to 2025-11-25, as a
// 2026-07-28 input request after): the request is refused with -32602
// naming the fixture's rules, and the host is never asked.
func TestInvalidFixturesCrossTheFirewall(t *testing.T) {
	groups := map[string][]requestFixture{}
	for _, f := range loadFixtures(t, "invalid") {
		if f.crossesTheWire() {
			key := fmt.Sprintf("%s tools=%v context=%v", f.Era, f.Caps.Tools, f.Caps.Context)
			groups[key] = append(groups[key], f)
		}
	}
	total, covered := 0, map[string]bool{}
	for key, fixtures := range groups {
		total += len(fixtures)
		for _, f := range fixtures {
			for _, r := range f.Want {
				covered[r] = true
			}
		}
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			host := startGroupHost(t, fixtures[0])
			for _, f := range fixtures {
				got, err := sampleRaw(t, host, f)
				if err != nil {
					t.Fatalf("%s: %v", f.name, err)
				}
				checkViolation(t, f, got)
			}
			if len(host.Asked) != 0 {
				t.Errorf("the host was asked %d time(s) for invalid requests", len(host.Asked))
			}
		})
	}
	if total < 50 {
		t.Fatalf("only %d invalid fixtures crossed the wire; the suite lost its coverage", total)
	}
	for _, r := range validate.Rules() {
		if strings.Contains(r.Stages, "request") && !covered[r.ID] && !offTheWire(r.ID) && !otherKind(r.ID) {
			t.Errorf("no fixture for request rule %s crosses the real firewall", r.ID)
		}
	}
}

// offTheWire are the request rules no upstream can reach through a
// firewall running on defaults: a frame whose params are not JSON is
// refused by the JSON-RPC layer before any sampling code runs, no host
// negotiates an unknown era, and the limit fixtures use small limits to
// stay small (the limits themselves are tested in validate/).
func offTheWire(rule string) bool {
	return rule == "json.syntax" || rule == "era.unknown" || strings.HasPrefix(rule, "limits.")
}

// otherKind are the rules of elicitation and roots requests, whose
// fixtures (testdata/requests/elicitation, testdata/requests/roots) this
// sampling test does not send.
func otherKind(rule string) bool {
	return strings.HasPrefix(rule, "ELI-") || strings.HasPrefix(rule, "RTS-")
}

func startGroupHost(t *testing.T, f requestFixture) *peer.Host {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	h, err := peer.StartHost(t.Context(), peer.HostOptions{Command: []string{binary, "serve", "--config", cfg},
		Answer: answerWith(hostAnswer), Tools: f.Caps.Tools, Context: f.Caps.Context, ProtocolVersion: f.Era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func checkViolation(t *testing.T, f requestFixture, got *peer.SampleOutcome) {
	t.Helper()
	if got.Error == nil || got.Error.Code != -32602 {
		t.Errorf("%s (%s): upstream got %+v, want -32602", f.name, f.Era, got.Error)
		return
	}
	var data struct {
		ReasonCodes []string `json:"reason_codes"`
	}
	_ = json.Unmarshal(got.Error.Data, &data)
	for _, rule := range f.Want {
		if !slices.Contains(data.ReasonCodes, rule) {
			t.Errorf("%s (%s): reason codes %v lack %s", f.name, f.Era, data.ReasonCodes, rule)
		}
	}
}
