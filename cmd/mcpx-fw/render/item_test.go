package render

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestExpirySaysWhatTheWireGets: show's "if nobody does by" line names
// what the relay answers an expired review with, for every era, kind,
// mode and stage: -32603 with the expiry sentence the relay sends
// (review.ExpiryMessage, for the item's own timeout) on the upstream's
// request before 2026-07-28, the result {"action": "cancel"} for a legacy
// elicitation, and from 2026-07-28 on the host's call failing, never the
// upstream's.
func TestExpirySaysWhatTheWireGets(t *testing.T) {
	const url = `{"mode":"url","message":"m","url":"https://example.com/a","elicitationId":"e1"}`
	const answer = `{"action":"accept","content":{}}`
	expired := `-32603 "expired after 1m0s awaiting review"`
	if want := review.ExpiryMessage(time.Minute); !strings.Contains(expired, want) {
		t.Fatalf("the relay's expiry sentence is %q, the table's %s", want, expired)
	}
	legacy := map[string]string{
		"sampling":                "the upstream gets " + expired,
		"roots":                   "the upstream gets " + expired,
		"elicitation form":        `the upstream gets {"action": "cancel"}`,
		"elicitation form answer": `the upstream gets {"action": "cancel"}`,
		"elicitation url":         `the upstream gets {"action": "cancel"} (a URL from a -32042 error: the host's call fails with ` + expired + ")",
	}
	items := map[string]review.Item{
		"sampling":                rendertest.KindItem(t, "sampling", `{}`, ""),
		"roots":                   rendertest.KindItem(t, "roots", `{}`, ""),
		"elicitation form":        rendertest.KindItem(t, "elicitation", rendertest.FormRequest, ""),
		"elicitation form answer": rendertest.KindItem(t, "elicitation", rendertest.FormRequest, answer),
		"elicitation url":         rendertest.KindItem(t, "elicitation", url, ""),
	}
	for name, it := range items {
		for _, era := range []string{"", "2025-06-18", "2025-11-25", "2026-07-28"} {
			it.Era = era
			want := legacy[name]
			if era == "2026-07-28" {
				want = "the host's call fails with " + expired + " and the upstream is not retried"
			}
			if got := expiryWords(it); got != want {
				t.Errorf("%s, era %q: %q, want %q", name, era, got, want)
			}
		}
	}
}

// TestShowNamesTheExpiryOfItsTimeout: the expiry sentence carries the
// item's own timeout, as the relay's does.
func TestShowNamesTheExpiryOfItsTimeout(t *testing.T) {
	it := rendertest.KindItem(t, "sampling", `{}`, "")
	it.ExpiresAt = it.CreatedAt.Add(10 * time.Minute)
	if got := expiryWords(it); !strings.Contains(got, `"expired after 10m0s awaiting review"`) {
		t.Errorf("expiry words %q do not name the 10-minute timeout", got)
	}
}

// TestShowSaysWhatWasWaived: show lists the baseline reasons the server's
// policy waived on the item's decision, under the reasons that held it,
// inertly (a policy's message may quote the request).
func TestShowSaysWhatWasWaived(t *testing.T) {
	it := rendertest.KindItem(t, "sampling", `{"maxTokens":10,"messages":[]}`, "")
	it.Waived = []review.Reason{{Code: "asks-for-secrets", Message: "the prompt asks for a password"},
		{Code: "secret-in-completion", Message: "quoted " + hostile}}
	out := showItem(it, false, 100)
	rendertest.CheckInert(t, "show", out)
	for _, want := range []string{
		"\nWhy it needs review:\n  - [elicitation-url-host] the URL's host is not in allowed_hosts\n" +
			"  waived by the server's policy: [asks-for-secrets] the prompt asks for a password\n",
		"  waived by the server's policy: [secret-in-completion] quoted x\\x1b[2J",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nTo decide: mcpx-fw") {
		t.Errorf("a waiver's message forged a line of show's own:\n%s", out)
	}
	if plain := showItem(rendertest.KindItem(t, "sampling", `{"maxTokens":10,"messages":[]}`, ""), false, 100); strings.Contains(plain, "waived") {
		t.Errorf("show of an item without waivers mentions them:\n%s", plain)
	}
}

// TestShowNamesTheServerOnce: a label the config did not set (it is the
// server's name) is not printed twice; one it set follows the name.
func TestShowNamesTheServerOnce(t *testing.T) {
	for _, tc := range []struct{ server, label, want string }{
		{"everything", "everything", "\nServer:   everything\n"},
		{"everything", "", "\nServer:   everything\n"},
		{"gh", "GitHub (team)", "\nServer:   gh — GitHub (team)\n"},
	} {
		it := rendertest.KindItem(t, "sampling", `{"maxTokens":10,"messages":[]}`, "")
		it.Server, it.Label = tc.server, tc.label
		if out := showItem(it, false, 100); !strings.Contains(out, tc.want) {
			t.Errorf("server %q label %q: show lacks %q:\n%s", tc.server, tc.label, tc.want, out)
		}
	}
}
