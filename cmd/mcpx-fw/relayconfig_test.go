package main

import (
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
)

// TestConfigServerOffersDefault: a server entry silent about sampling,
// elicitation.enabled and roots.enabled is offered each (when the host
// declared it), as config.example.yaml shows; an explicit false is kept,
// and reaches the relay.
func TestConfigServerOffersDefault(t *testing.T) {
	configtest.CleanEnv(t)
	path := configtest.WriteFile(t, "servers:\n  quiet:\n    command: [cat]\n  closed:\n    command: [cat]\n"+
		"    sampling: false\n    elicitation: {enabled: false}\n    roots: {enabled: false, allow: [\"file:///w\"]}\n"+
		"  partial:\n    command: [cat]\n    elicitation: {allowed_hosts: [example.com]}\n")
	got, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	type offers struct{ sampling, elicitation, roots bool }
	want := map[string]offers{"quiet": {true, true, true}, "closed": {false, false, false}, "partial": {true, true, true}}
	for name, w := range want {
		s := got.Servers[name]
		if g := (offers{s.Sampling, s.Elicitation.Enabled, s.Roots.Enabled}); g != w {
			t.Errorf("servers.%s: sampling, elicitation.enabled, roots.enabled = %+v, want %+v", name, g, w)
		}
	}
	got.StateDir = t.TempDir() // relayConfig makes the seal key there
	rc, err := relayConfig(&runtime{cfg: got, isolation: isolationPlan{isolated: map[string]bool{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rc.Upstreams {
		w := want[u.Name]
		if u.Sampling != w.sampling || u.Elicitation.Enabled != w.elicitation || u.Roots.Enabled != w.roots {
			t.Errorf("relay upstream %s: %+v, want %+v", u.Name, u, w)
		}
		if u.Name == "closed" && (len(u.Roots.Allow) != 1 || u.Roots.Allow[0] != "file:///w") {
			t.Errorf("relay upstream closed: roots.allow %q", u.Roots.Allow)
		}
		if u.Name == "partial" && (len(u.Elicitation.AllowedHosts) != 1 || u.Elicitation.AllowedHosts[0] != "example.com") {
			t.Errorf("relay upstream partial: elicitation.allowed_hosts %q", u.Elicitation.AllowedHosts)
		}
	}
}
