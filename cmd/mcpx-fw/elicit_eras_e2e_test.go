package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Elicitation in every era cell: a legacy upstream (the Go SDK
// everything-server on a 2025-11-25 session, or the npm server-everything)
// and a 2026-07-28 upstream (the Go everything-server's input requests),
// each behind a 2025-11-25 host and a 2026-07-28 host (Go SDK and npm
// 2.x), so behind a 2026-07-28 host a legacy upstream is bridged. In each
// cell a request the policy permits, one it denies, one a person approves,
// one that breaks a structural limit, and an answer that breaks the
// requested schema; and, where the peer lets the test choose the request,
// a form asking for a password, an http:// URL and a punycode host.
//
// Every answer is the code table's (relay's codes.go): a refused push gets
// {"action":"decline"} (the peers print the action they got), a refused
// 2026-07-28 input request fails the host's call, and the host is asked
// only for what passes.
//
// The peers' requests are fixed where the tool takes no message, so the
// configuration chooses: a server labelled deny or hold is refused or held
// by a package the test adds to the shipped policies (cellsPolicy).

// cellsPolicy is the shipped policy set plus rules, in package
// mcpxfw.global beside the shipped ones, that deny every elicitation and
// roots list of a server labelled deny, and hold every elicitation of one
// labelled hold.
func cellsPolicy(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "mcpxfw"), "e2e_cells.rego", `package mcpxfw.global

import data.mcpxfw.lib

deny contains {"code": "e2e-deny", "message": "this server's elicitations and roots are refused"} if {
	input.kind in {"elicitation", "roots"}
	data.mcpxfw.config.servers[input.server.name].label == "deny"
}

review contains {"code": "e2e-hold", "message": "this server's elicitations wait for a person"} if {
	lib.request_stage
	input.kind == "elicitation"
	data.mcpxfw.config.servers[input.server.name].label == "hold"
}
`)
	return dir
}

// cellsServers are the upstreams of one serve: the Go everything-server
// as a legacy upstream (leg*) and as a 2026-07-28 upstream (new*), each
// labelled pass, deny or hold, and the npm server-everything (url), whose
// URL tool takes any URL.
func cellsServers(t *testing.T) string {
	var b strings.Builder
	for _, era := range []struct{ prefix, protocol string }{{"leg", "legacy"}, {"new", "2026-07-28"}} {
		for _, label := range []string{"pass", "deny", "hold"} {
			name := era.prefix
			if label != "pass" {
				name += label
			}
			fmt.Fprintf(&b, "  %s:\n%s", name, serverEntry(goEverythingCommand(t), fmt.Sprintf("    protocol: %s\n    label: %s\n", era.protocol, label)))
		}
	}
	b.WriteString("  url:\n" + serverEntry(npmEverythingCommand(t), "    label: pass\n    elicitation:\n      allowed_hosts: [example.com, modelcontextprotocol.io]\n"))
	return b.String()
}

// eraCell is one call and what the host must see of it.
type eraCell struct {
	name string
	call elicitCall
	// check judges the outcome; asked is how many elicitation requests
	// the host must get.
	check   func(o elicitOutcome) bool
	want    string
	asked   int
	approve bool // a person approves the one review it makes
	// mayHold: the request may be held for review or pass (where the
	// shipped policy's choice is open); a review is approved.
	mayHold bool
}

// textHas is a check that the call completed with a text holding each of
// want and none of not.
func textHas(want []string, not ...string) func(elicitOutcome) bool {
	return func(o elicitOutcome) bool {
		if o.Code != 0 {
			return false
		}
		for _, w := range want {
			if !strings.Contains(o.Text, w) {
				return false
			}
		}
		for _, n := range not {
			if strings.Contains(o.Text, n) {
				return false
			}
		}
		return true
	}
}

// failedWith is a check that the host's call failed with code.
func failedWith(code int64) func(elicitOutcome) bool {
	return func(o elicitOutcome) bool { return o.Code == code }
}

const (
	legAccepted = "Elicitation result: action=accept, content=map[username:host]"
	legDeclined = "Elicitation result: action=decline, content=map[]"
	newAccepted = "Hello, host!"
)

func legacyCall(server, message, how string) elicitCall {
	return elicitCall{Name: server + "__test_elicitation", Arguments: map[string]any{"message": message}, Elicit: how}
}

func inputCall(server, how string) elicitCall {
	return elicitCall{Name: server + "__test_input_required_result_elicitation", Elicit: how}
}

func urlCall(url, id string) elicitCall {
	return elicitCall{Name: "url__trigger-url-elicitation", Arguments: map[string]any{"url": url, "elicitationId": id}}
}

// eraCells are the calls of the cells serve, in the order one host makes
// them.
func eraCells() []eraCell {
	const plain = "Please tell us your preferred username."
	return []eraCell{
		// A legacy upstream (behind a 2026-07-28 host: bridged).
		{name: "legacy upstream/permitted", call: legacyCall("leg", plain, ""),
			check: textHas([]string{legAccepted}), want: legAccepted, asked: 1},
		{name: "legacy upstream/denied is a decline", call: legacyCall("legdeny", plain, ""),
			check: textHas([]string{legDeclined}), want: legDeclined},
		{name: "legacy upstream/approved", call: legacyCall("leghold", plain, ""),
			check: textHas([]string{legAccepted}), want: legAccepted, asked: 1, approve: true},
		{name: "legacy upstream/a form asking for a password is declined unasked", call: legacyCall("leg", "Please enter your password to continue.", ""),
			check: textHas([]string{legDeclined}), want: legDeclined},
		{name: "legacy upstream/an answer breaking the schema never reaches it", call: legacyCall("leg", plain, "extra"),
			check: textHas([]string{"elicitation failed", "invalid elicitation result"}, "notInTheSchema", "action=accept"),
			want:  `isError, "host returned an invalid elicitation result" (-32603)`, asked: 1},
		{name: "legacy upstream/the host's cancel passes as sent", call: legacyCall("leg", plain, "cancel"),
			check: textHas([]string{"Elicitation result: action=cancel"}), want: "action=cancel", asked: 1},
		{name: "legacy upstream/an http URL is declined unasked", call: urlCall("http://example.com/login", "e2e-http"),
			check: textHas([]string{"❌ User declined to open the URL (Elicitation ID: e2e-http)"}), want: "declined"},
		{name: "legacy upstream/an allowed https URL passes", call: urlCall("https://example.com/verify", "e2e-ok"),
			check: textHas([]string{"✅ User completed the URL elicitation flow.\nElicitation ID: e2e-ok"}), want: "completed", asked: 1},
		{name: "legacy upstream/a punycode host is held and approved", call: urlCall("https://xn--exmple-cua.com/login", "e2e-idn"),
			check: textHas([]string{"✅ User completed the URL elicitation flow.\nElicitation ID: e2e-idn"}), want: "completed", asked: 1, approve: true},
		// A 2026-07-28 upstream (behind a 2025-11-25 host: asked by push).
		{name: "2026 upstream/permitted", call: inputCall("new", ""),
			check: textHas([]string{newAccepted}), want: newAccepted, asked: 1},
		{name: "2026 upstream/denied fails the call with -1", call: inputCall("newdeny", ""),
			check: failedWith(-1), want: "error -1"},
		{name: "2026 upstream/approved", call: inputCall("newhold", ""),
			check: textHas([]string{newAccepted}), want: newAccepted, asked: 1, approve: true},
		{name: "2026 upstream/an answer breaking the schema fails the call with -32603", call: inputCall("new", "extra"),
			check: failedWith(-32603), want: "error -32603", asked: 1},
	}
}

// invalidCells are the calls of a serve whose limits.max_bytes every
// elicitation request breaks: a structural violation, -32602, and the
// host is never asked.
func invalidCells() []eraCell {
	return []eraCell{
		{name: "legacy upstream/invalid", call: legacyCall("leg", "Please tell us your preferred username.", ""),
			check: textHas([]string{"elicitation failed", "Message too large"}, "action="), want: `isError, "Message too large" (-32602)`},
		{name: "legacy npm upstream/invalid is -32602", call: urlCall("https://example.com/verify", "e2e-big"),
			check: textHas([]string{"MCP error -32602: Message too large"}, "✅"), want: "MCP error -32602: Message too large"},
		{name: "2026 upstream/invalid fails the call with -32602", call: inputCall("new", ""),
			check: failedWith(-32602), want: "error -32602"},
	}
}

// expiryCells are the calls of a serve whose reviews expire at once:
// nobody chose, so a legacy upstream gets {"action":"cancel"} and a
// 2026-07-28 host's call fails with -32603 naming the expiry; the host is
// never asked.
func expiryCells() []eraCell {
	return []eraCell{
		{name: "legacy upstream/expired is a cancel", call: legacyCall("leghold", "Please tell us your preferred username.", ""),
			check: textHas([]string{"Elicitation result: action=cancel"}), want: "action=cancel"},
		{name: "2026 upstream/expired fails the call with -32603", call: inputCall("newhold", ""),
			check: func(o elicitOutcome) bool { return o.Code == -32603 && strings.Contains(o.Message, "expired") },
			want:  `error -32603 "expired …"`},
	}
}

func TestElicitationEraCells(t *testing.T) {
	nodeSetup(t)
	policy := cellsPolicy(t)
	invalidServers := "  leg:\n" + serverEntry(goEverythingCommand(t), "    protocol: legacy\n") +
		"  new:\n" + serverEntry(goEverythingCommand(t), "    protocol: 2026-07-28\n") +
		"  url:\n" + serverEntry(npmEverythingCommand(t), "    elicitation:\n      allowed_hosts: [example.com, modelcontextprotocol.io]\n")
	for _, h := range elicitHosts() {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			t.Run("cells", func(t *testing.T) {
				t.Parallel()
				runCells(t, h, testConfig(t, policy, time.Minute, cellsServers(t)), eraCells())
			})
			t.Run("expiry", func(t *testing.T) {
				t.Parallel()
				servers := "  leghold:\n" + serverEntry(goEverythingCommand(t), "    protocol: legacy\n    label: hold\n") +
					"  newhold:\n" + serverEntry(goEverythingCommand(t), "    protocol: 2026-07-28\n    label: hold\n")
				runCells(t, h, testConfig(t, policy, time.Second, servers), expiryCells())
			})
			t.Run("invalid", func(t *testing.T) {
				t.Parallel()
				cfg := testConfig(t, policy, time.Minute, invalidServers)
				appendConfig(t, cfg, "limits:\n  max_bytes: 64\n")
				runCells(t, h, cfg, invalidCells())
			})
		})
	}
}

// runCells makes the cells' calls as host h through serve with cfg, with
// a person approving every review as it appears (when a cell expects one;
// else nobody decides), and judges each: as many reviews as the cells
// make, and each call's outcome.
func runCells(t *testing.T, h elicitHost, cfg string, cells []eraCell) {
	required, optional := 0, 0
	calls := make([]elicitCall, len(cells))
	for i, c := range cells {
		calls[i] = c.call
		switch {
		case c.approve:
			required++
		case c.mayHold:
			optional++
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	type approvals struct {
		n    int
		errs []string
	}
	approved := make(chan approvals, 1)
	if required+optional == 0 {
		approved <- approvals{} // nobody decides: a review expires
	} else {
		go func() {
			n, errs := approveAll(ctx, cfg)
			approved <- approvals{n, errs}
		}()
	}
	got := h.run(t, firewallCommand(cfg), calls)
	cancel()
	a := <-approved
	if len(a.errs) > 0 {
		t.Errorf("approving: %s", strings.Join(a.errs, "; "))
	}
	if a.n < required || a.n > required+optional {
		t.Errorf("a person approved %d review(s), want %d to %d", a.n, required, required+optional)
	}
	for i, c := range cells {
		if !c.check(got[i]) {
			t.Errorf("%s: %s; want %s", c.name, got[i], c.want)
		}
		if got[i].Elicited != c.asked {
			t.Errorf("%s: the host was asked %d time(s), want %d", c.name, got[i].Elicited, c.asked)
		}
	}
}

// approveAll approves every review with `mcpx-fw review approve` as soon
// as it is pending, until ctx ends; it returns how many it approved and
// what went wrong.
func approveAll(ctx context.Context, cfg string) (int, []string) {
	var errs []string
	n := 0
	for ctx.Err() == nil {
		res := runQuiet(ctx, "review", "list", "--json", "--config", cfg)
		items, err := listLines[struct{ ID, State string }](res.stdout)
		if res.code != 0 || err != nil || len(items) == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if res := runQuiet(ctx, "review", "approve", items[0].ID, "--config", cfg); res.code != 0 {
			if ctx.Err() == nil {
				errs = append(errs, fmt.Sprintf("review approve %s: exit %d: %s", items[0].ID, res.code, res.stderr))
			}
			continue
		}
		n++
	}
	return n, errs
}
