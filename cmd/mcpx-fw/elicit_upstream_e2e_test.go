package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The shipped policies' elicitation rules end to end, with the project's
// own test upstream (testdata/upstream), whose ask tool pushes any
// elicitation/create and whose ask_input asks for it as a 2026-07-28 input
// request: the requests the everything-servers cannot be made to send. A
// form asking for a password and an http:// URL are denied, the host never
// asked: a legacy upstream gets {"action":"decline"}, a 2026-07-28 host's
// call fails with -1. A punycode host is held until a person approves. An
// answer that breaks the requested schema never reaches the upstream.

// askOutcome is what the test upstream's ask tools report.
type askOutcome struct {
	Result *struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
		Roots   []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	} `json:"result"`
	Error *struct {
		Code int64 `json:"code"`
	} `json:"error"`
}

// asked reads the outcome an ask tool printed; ok is false when the call
// failed or printed something else.
func asked(o elicitOutcome) (askOutcome, bool) {
	var a askOutcome
	if o.Code != 0 || o.IsError || json.Unmarshal([]byte(o.Text), &a) != nil {
		return a, false
	}
	return a, true
}

// askGot is a check that the upstream got an answer with action.
func askGot(action string) func(elicitOutcome) bool {
	return func(o elicitOutcome) bool {
		a, ok := asked(o)
		return ok && a.Result != nil && a.Result.Action == action && (action == "accept" || a.Result.Content == nil)
	}
}

// askRefused is a check that the upstream's push was refused with code.
func askRefused(code int64) func(elicitOutcome) bool {
	return func(o elicitOutcome) bool {
		a, ok := asked(o)
		return ok && a.Error != nil && a.Error.Code == code && !strings.Contains(o.Text, "notInTheSchema")
	}
}

const (
	secretForm = `{"mode":"form","message":"Sign in to continue.","requestedSchema":{"type":"object",` +
		`"properties":{"password":{"type":"string","title":"Password"}},"required":["password"]}}`
	plainForm = `{"mode":"form","message":"Which colour do you like?","requestedSchema":{"type":"object",` +
		`"properties":{"colour":{"type":"string","enum":["red","green"]},"count":{"type":"integer","minimum":1,"maximum":9}},"required":["colour"]}}`
	// sep1330Form is a valid SEP-1330 enum schema (the Go everything-server's
	// own), which the Go SDK's client refuses before asking anyone.
	sep1330Form = `{"mode":"form","message":"Test enum schemas","requestedSchema":{"type":"object","properties":{` +
		`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]},` +
		`"untitledMulti":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["option1","option2"]}},` +
		`"titledMulti":{"type":"array","minItems":1,"maxItems":2,"items":{"anyOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]}},` +
		`"legacyEnum":{"type":"string","enum":["opt1","opt2"],"enumNames":["Option One","Option Two"]}}}}`
)

func urlForm(url string) string {
	return fmt.Sprintf(`{"mode":"url","message":"Open this page to sign in.","url":%q,"elicitationId":"e2e-peer"}`, url)
}

// upstreamCells are the calls for the upstream named server (protocol
// legacy: ask pushes; 2026-07-28: ask_input asks by input request).
func upstreamCells(server string, legacy bool) []eraCell {
	tool, era := server+"__ask_input", "2026 upstream"
	refused := func(code int64) func(elicitOutcome) bool { return failedWith(code) }
	declined := refused(-1)
	if legacy {
		tool, era = server+"__ask", "legacy upstream"
		refused = askRefused
		declined = askGot("decline")
	}
	call := func(params, how string) elicitCall {
		return elicitCall{Name: tool, Arguments: map[string]any{"method": "elicitation/create", "params": json.RawMessage(params)}, Elicit: how}
	}
	return []eraCell{
		{name: era + "/a plain form passes", call: call(plainForm, ""), check: askGot("accept"), want: "accept", asked: 1},
		{name: era + "/a form asking for a password is denied unasked", call: call(secretForm, ""), check: declined, want: "a refusal"},
		{name: era + "/an http URL is denied unasked", call: call(urlForm("http://example.com/login"), ""), check: declined, want: "a refusal"},
		{name: era + "/an allowed https URL passes", call: call(urlForm("https://example.com/login"), ""), check: askGot("accept"), want: "accept", asked: 1},
		{name: era + "/a punycode host is held, then approved", call: call(urlForm("https://xn--exmple-cua.com/login"), ""),
			check: askGot("accept"), want: "accept after approval", asked: 1, approve: true},
		{name: era + "/an answer breaking the schema never reaches it", call: call(plainForm, "extra"), check: refused(-32603),
			want: "-32603 and no answer", asked: 1},
		{name: era + "/the host's decline passes as sent", call: call(plainForm, "decline"), check: askGot("decline"), want: "decline", asked: 1},
	}
}

// sep1330Cells: a valid SEP-1330 schema passes to a host that accepts it
// (the npm client). The Go SDK client refuses it before its handler runs,
// directly as through the firewall, so it has no cell of its own here.
func sep1330Cells(server string, legacy bool) []eraCell {
	tool, era := server+"__ask_input", "2026 upstream"
	if legacy {
		tool, era = server+"__ask", "legacy upstream"
	}
	return []eraCell{{name: era + "/a SEP-1330 enum form passes", call: elicitCall{Name: tool,
		Arguments: map[string]any{"method": "elicitation/create", "params": json.RawMessage(sep1330Form)}},
		check: askGot("accept"), want: "accept", asked: 1}}
}

func TestElicitationUpstreamShippedPolicy(t *testing.T) {
	nodeSetup(t)
	const hosts = "    elicitation:\n      allowed_hosts: [example.com]\n"
	servers := "  leg:\n" + serverEntry([]string{upstreamBinary}, "    protocol: legacy\n"+hosts) +
		"  new:\n" + serverEntry([]string{upstreamBinary}, "    protocol: 2026-07-28\n"+hosts)
	for _, h := range elicitHosts() {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			cells := append(upstreamCells("leg", true), upstreamCells("new", false)...)
			if h.npm {
				cells = append(cells, append(sep1330Cells("leg", true), sep1330Cells("new", false)...)...)
			}
			runCells(t, h, testConfig(t, repoPath(t, "policies"), time.Minute, servers), cells)
		})
	}
}
