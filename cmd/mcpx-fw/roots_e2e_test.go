package main

import (
	"strings"
	"testing"
	"time"
)

// Roots through the firewall in every era cell: the host's roots reach an
// upstream only after the policy saw them, narrowed to
// servers.<name>.roots.allow; a policy that denies them refuses the
// upstream's request (-1 to a legacy upstream, the host's call fails with
// -1 in 2026-07-28), and nothing of the list reaches the upstream. Every
// host declares two roots (e2eRoots); allow keeps the first.

// rootsServers: the Go everything-server as a legacy and as a 2026-07-28
// upstream, each allowed the first root or labelled deny, and the npm
// server-everything allowed the first root.
func rootsServers(t *testing.T) string {
	const allow = "    roots:\n      allow: [file:///srv/e2e/allowed]\n"
	return "  leg:\n" + serverEntry(goEverythingCommand(t), "    protocol: legacy\n    label: pass\n"+allow) +
		"  legdeny:\n" + serverEntry(goEverythingCommand(t), "    protocol: legacy\n    label: deny\n") +
		"  new:\n" + serverEntry(goEverythingCommand(t), "    protocol: 2026-07-28\n    label: pass\n"+allow) +
		"  newdeny:\n" + serverEntry(goEverythingCommand(t), "    protocol: 2026-07-28\n    label: deny\n") +
		"  npm:\n" + serverEntry(npmEverythingCommand(t), "    label: pass\n"+allow)
}

func rootsCells() []eraCell {
	const narrowed = "Client exposed 1 root(s): file:///srv/e2e/allowed"
	return []eraCell{
		{name: "legacy upstream/narrowed to roots.allow", call: elicitCall{Name: "leg__test_input_required_result_list_roots"},
			check: textHas([]string{narrowed}, "other"), want: narrowed},
		{name: "legacy upstream/denied: the list never reaches it", call: elicitCall{Name: "legdeny__test_input_required_result_list_roots"},
			check: func(o elicitOutcome) bool {
				return (o.Code != 0 || o.IsError) && !strings.Contains(o.Text+o.Message, "file:///")
			}, want: "an error, no root"},
		{name: "2026 upstream/narrowed to roots.allow", call: elicitCall{Name: "new__test_input_required_result_list_roots"},
			check: textHas([]string{narrowed}, "other"), want: narrowed},
		{name: "2026 upstream/denied fails the call with -1", call: elicitCall{Name: "newdeny__test_input_required_result_list_roots"},
			check: failedWith(-1), want: "error -1"},
		{name: "npm legacy upstream/narrowed to roots.allow", call: elicitCall{Name: "npm__get-roots-list"},
			check: textHas([]string{"Current MCP Roots (1 total):\n\n1. Unnamed Root\n   URI: file:///srv/e2e/allowed\n\n"}, "other"),
			want:  "Current MCP Roots (1 total): allowed"},
	}
}

func TestRootsThroughFirewall(t *testing.T) {
	nodeSetup(t)
	policy := cellsPolicy(t)
	for _, h := range elicitHosts() {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			runCells(t, h, testConfig(t, policy, time.Minute, rootsServers(t)), rootsCells())
		})
	}
}
