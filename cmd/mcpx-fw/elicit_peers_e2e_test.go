package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Elicitation and roots with peers nobody here wrote: the Go SDK
// everything-server's and @modelcontextprotocol/server-everything's tools
// that elicit or list roots, called by each host (elicit_hosts_e2e_test.go)
// directly and through `mcpx-fw serve` with the shipped policies, which
// permit them. Each result through the firewall is the one the same host
// gets directly; where a host cannot reach a peer directly (the npm host
// pinned to 2026-07-28, and the npm server, which speaks only 2025), or
// where the firewall bridges a legacy upstream behind a 2026-07-28 host,
// the reference is the same host family at 2025-11-25.

// peerCall is one tool call of a peer and a text its result must hold
// when the upstream session can serve it ("" = compared only).
type peerCall struct {
	elicitCall
	want string
	// push: the tool pushes on its session, which a 2026-07-28 session
	// refuses ("cannot be sent while serving a request on protocol
	// version 2026-07-28"); want applies on a legacy session only.
	push bool
	// sdkRefuses: the Go SDK's client refuses the request's schema
	// before its handler runs, where the SDK itself fulfils a request: a
	// 2026-07-28 input request (the test host answers pushes before the
	// SDK's checks, relay/peer/hostinputs.go). Behind the bridge a
	// 2026-07-28 Go host so refuses it inside its own call, which fails
	// there, where the reference (the same host at 2025-11-25) answered:
	// the cell checks only that the call failed unasked; the npm hosts are
	// its reference.
	sdkRefuses bool
	// denied is what the result holds on a legacy session when the policy
	// denies every elicitation and roots list ("" = anything but want);
	// on a 2026-07-28 session an input request denied fails the call, -1.
	denied string
}

// elicitPeer is one real upstream.
type elicitPeer struct {
	name    string
	command func(t *testing.T) []string // the server, run directly
	// server is its servers: entry under the name "up": protocol and
	// elicitation settings as well as the command.
	server func(t *testing.T) string
	// legacy: the upstream session is 2025-11-25 whatever the host
	// speaks (the npm server, or protocol: legacy), so a 2026-07-28 host
	// reaches it only through the firewall's bridge.
	legacy bool
	calls  []peerCall
}

func goEverythingCommand(t *testing.T) []string { return []string{everythingServer(t)} }

// npmEverythingCommand runs @modelcontextprotocol/server-everything over
// stdio. Once initialized it keeps timers running and does not exit when
// its stdin closes, so serve, as the SDK's command transport does, ends it
// five seconds later with SIGTERM; the preload makes it exit at the end of
// its input, so that each test's serve stops at once.
func npmEverythingCommand(t *testing.T) []string {
	return []string{nodeSetup(t), "--import", `data:text/javascript,process.stdin.on("end",()=>process.exit(0))`,
		repoPath(t, "testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"}
}

// serverEntry is a servers: entry running command, with extra lines.
func serverEntry(command []string, extra string) string {
	quoted := make([]string, len(command))
	for i, c := range command {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("    command: [%s]\n%s", strings.Join(quoted, ", "), extra)
}

func goEverythingCalls() []peerCall {
	return []peerCall{
		{elicitCall{Name: "test_elicitation", Arguments: map[string]any{"message": "Please tell us your preferred username."}},
			"Elicitation result: action=accept, content=map[username:host]", true, false, legDeclined},
		{elicitCall{Name: "test_elicitation_sep1034_defaults"},
			"Elicitation result: action=accept, content=map[age:30 name:John Doe score:95.5 status:active verified:true]", true, false, legDeclined},
		// The Go SDK refuses its own everything-server's SEP-1330 schema
		// (as a client before asking, as a server on the answer): the
		// result is an error directly, and must be the same one through.
		{elicitCall{Name: "test_elicitation_sep1330_enums"}, "", true, true, legDeclined},
		{elicitCall{Name: "test_input_required_result_elicitation"}, "Hello, host!", false, false, ""},
		{elicitCall{Name: "test_input_required_result_list_roots"},
			"Client exposed 2 root(s): file:///srv/e2e/allowed, file:///srv/e2e/other", false, false, ""},
		{elicitCall{Name: "test_input_required_result_multiple_inputs"}, "npm-host says hi host — 2 root(s) visible", false, false, ""},
	}
}

func elicitPeers() []elicitPeer {
	return []elicitPeer{
		{"go-everything", goEverythingCommand, func(t *testing.T) string {
			return serverEntry(goEverythingCommand(t), "")
		}, false, goEverythingCalls()},
		{"go-everything-legacy", goEverythingCommand, func(t *testing.T) string {
			return serverEntry(goEverythingCommand(t), "    protocol: legacy\n")
		}, true, goEverythingCalls()},
		{"npm-everything", npmEverythingCommand, func(t *testing.T) string {
			return serverEntry(npmEverythingCommand(t), "    elicitation:\n      allowed_hosts: [example.com, modelcontextprotocol.io]\n")
		}, true, []peerCall{
			{elicitCall{Name: "trigger-elicitation-request"}, "✅ User provided the requested information!", true, false, "❌ User declined to provide the requested information."},
			{elicitCall{Name: "trigger-url-elicitation", Arguments: map[string]any{"url": "https://example.com/verify", "elicitationId": "e2e-url-1"}},
				"✅ User completed the URL elicitation flow.\nElicitation ID: e2e-url-1\nURL: https://example.com/verify", true, false,
				"❌ User declined to open the URL (Elicitation ID: e2e-url-1)."},
			// The error path: the tool fails with -32042 (URL elicitation
			// required), naming a URL of its own (on modelcontextprotocol.io,
			// an allowed host, so its elicitation passes the policy); the
			// host gets the error, rebuilt from what passed, and is asked
			// nothing.
			{elicitCall{Name: "trigger-url-elicitation", Arguments: map[string]any{"url": "https://example.com/verify", "elicitationId": "e2e-url-2", "errorPath": true}},
				"", true, false, ""},
			{elicitCall{Name: "get-roots-list"}, "Current MCP Roots (2 total):\n\n1. Unnamed Root\n   URI: file:///srv/e2e/allowed\n\n2. Unnamed Root\n   URI: file:///srv/e2e/other", true, false,
				"The client supports roots but no roots are currently configured."},
		}},
	}
}

// referenceHost is the host whose direct run is the reference for h on
// peer p: h itself, or h's family at 2025-11-25 where h cannot reach p
// directly or the firewall bridges p behind h.
func referenceHost(h elicitHost, p elicitPeer) string {
	if p.legacy && h.version == "2026-07-28" {
		return strings.Replace(h.name, "2026-07-28", "2025-11-25", 1)
	}
	return h.name
}

func TestElicitationPeersThroughFirewall(t *testing.T) {
	peers, hosts := elicitPeers(), elicitHosts()
	nodeSetup(t)
	// The references: each host family directly against each peer's
	// command, once.
	var mu sync.Mutex
	direct := map[string][]elicitOutcome{} // host name + "\x00" + peer command name
	t.Run("direct", func(t *testing.T) {
		for _, p := range []elicitPeer{peers[0], peers[2]} {
			for _, h := range hosts {
				if referenceHost(h, p) != h.name {
					continue
				}
				t.Run(p.name+"/"+h.name, func(t *testing.T) {
					t.Parallel()
					got := h.run(t, p.command(t), callsOf(p))
					mu.Lock()
					direct[h.name+"\x00"+commandName(p)] = got
					mu.Unlock()
				})
			}
		}
	})
	if t.Failed() {
		return
	}
	for _, p := range peers {
		for _, h := range hosts {
			if p.name == "go-everything-legacy" && h.version != "2026-07-28" {
				continue // the same sessions as go-everything
			}
			t.Run(p.name+"/"+h.name, func(t *testing.T) {
				t.Parallel()
				cfg := testConfig(t, repoPath(t, "policies"), time.Minute, "  up:\n"+p.server(t))
				got := h.run(t, firewallCommand(cfg), callsOf(p))
				ref := direct[referenceHost(h, p)+"\x00"+commandName(p)]
				legacySession := p.legacy || h.version == "2025-11-25"
				for i, c := range p.calls {
					if c.sdkRefuses && !h.npm && p.legacy && h.version == "2026-07-28" {
						if (got[i].Code == 0 && !got[i].IsError) || got[i].Elicited != 0 {
							t.Errorf("%s: %s; want the Go SDK host to refuse the schema itself, unasked", c.Name, got[i])
						}
						continue
					}
					checkSameOutcome(t, c, got[i], ref[i], legacySession)
				}
			})
		}
	}
}

// checkSameOutcome: the call through the firewall ended as it did
// directly, with the host asked as often, and where the session could
// serve it, with the expected text.
func checkSameOutcome(t *testing.T, c peerCall, got, ref elicitOutcome, legacySession bool) {
	t.Helper()
	if got.Code != ref.Code || got.IsError != ref.IsError || got.Text != ref.Text {
		t.Errorf("%s through mcpx-fw: %s\ndirectly: %s", c.Name, got, ref)
		return
	}
	if got.Elicited != ref.Elicited || got.Sampled != ref.Sampled {
		t.Errorf("%s: the host was asked %d elicitation(s), %d completion(s) through mcpx-fw, %d and %d directly",
			c.Name, got.Elicited, got.Sampled, ref.Elicited, ref.Sampled)
	}
	if c.want != "" && (legacySession || !c.push) && !strings.Contains(got.Text, c.want) {
		t.Errorf("%s: %s, want the text to hold %q", c.Name, got, c.want)
	}
}

func callsOf(p elicitPeer) []elicitCall {
	out := make([]elicitCall, len(p.calls))
	for i, c := range p.calls {
		out[i] = c.elicitCall
	}
	return out
}

// commandName names a peer's command: the two Go everything-server peers
// run the same one.
func commandName(p elicitPeer) string {
	return strings.TrimSuffix(p.name, "-legacy")
}

// TestElicitationPeersDenied: the same calls through a serve whose policy
// denies every elicitation and roots list of the server (cellsPolicy,
// label deny). No host is ever asked; a legacy session's push gets
// {"action":"decline"} (or, for roots, an error) and the tool reports it as
// it reports a person's decline; a 2026-07-28 input request fails the
// host's call with -1.
func TestElicitationPeersDenied(t *testing.T) {
	nodeSetup(t)
	policy := cellsPolicy(t)
	for _, p := range elicitPeers() {
		for _, h := range elicitHosts() {
			if p.name == "go-everything-legacy" && h.version != "2026-07-28" {
				continue // the same sessions as go-everything
			}
			t.Run(p.name+"/"+h.name, func(t *testing.T) {
				t.Parallel()
				cfg := testConfig(t, policy, time.Minute, "  up:\n"+p.server(t)+"    label: deny\n")
				got := h.run(t, firewallCommand(cfg), callsOf(p))
				legacySession := p.legacy || h.version == "2025-11-25"
				for i, c := range p.calls {
					checkDenied(t, c, got[i], legacySession)
				}
			})
		}
	}
}

// checkDenied: the host was never asked, and the upstream's request was
// answered as the wire table says for a deny.
func checkDenied(t *testing.T, c peerCall, got elicitOutcome, legacySession bool) {
	t.Helper()
	switch {
	case got.Elicited != 0:
		t.Errorf("%s: the host was asked %d time(s) for a denied elicitation: %s", c.Name, got.Elicited, got)
	case c.want != "" && strings.Contains(got.Text, c.want):
		t.Errorf("%s: %s, the answer of a permitted request", c.Name, got)
	case legacySession && c.denied != "" && !strings.Contains(got.Text, c.denied):
		t.Errorf("%s: %s, want the text to hold %q", c.Name, got, c.denied)
	case !legacySession && !c.push && got.Code != -1:
		t.Errorf("%s: %s, want the call to fail with -1", c.Name, got)
	}
}
