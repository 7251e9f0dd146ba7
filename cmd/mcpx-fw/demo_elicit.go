package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/relay/demopeer"
)

// demoElicitCase is one elicitation the demo upstream pushes (a legacy
// elicitation/create), the result the upstream must get for it, and
// whether the host, that is the user, must be asked.
type demoElicitCase struct {
	title     string
	params    string
	want      string // the ElicitResult the upstream must get
	hostAsked bool
	approve   bool // a reviewer approves it from another process
}

// demoAllowedHost is the one URL host the demo server may send the user to
// without review (servers.demo.elicitation.allowed_hosts).
const demoAllowedHost = "forecast.example.com"

var demoElicitCases = []demoElicitCase{
	{title: "a form asking for a name is permitted; the user's answer reaches the upstream", hostAsked: true,
		params: `{"mode":"form","message":"Which name should the weather report be addressed to?",` +
			`"requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Your name"}},"required":["name"]}}`,
		want: `{"action":"accept","content":{"name":"Ada Lovelace"}}`},
	{title: "a form asking for a password is denied by policy; the user is never asked",
		params: `{"mode":"form","message":"Sign in to see the forecast.",` +
			`"requestedSchema":{"type":"object","properties":{"password":{"type":"string","title":"Password"}},"required":["password"]}}`,
		want: `{"action":"decline"}`},
	{title: "a URL whose host is not in allowed_hosts is escalated, and a reviewer approves it", hostAsked: true, approve: true,
		params: `{"mode":"url","message":"Link your weather station.","url":"https://stations.example.net/link?id=42","elicitationId":"demo-42"}`,
		want:   `{"action":"accept"}`},
	{title: "an http:// URL is denied by policy; the user is never asked",
		params: `{"mode":"url","message":"Open the radar map.","url":"http://radar.example.com/map","elicitationId":"demo-43"}`,
		want:   `{"action":"decline"}`},
}

// runDemoElicitation runs the elicitation cases, numbered from first on
// after the sampling cases, and returns how many did not behave as expected.
func runDemoElicitation(ctx context.Context, out io.Writer, first int, host *demopeer.Host, self, cfgPath, dlog string) int {
	fmt.Fprintf(out, "Elicitation: the upstream asks the user, through the host, to fill in a form or open a URL\n"+
		"(the demo server's elicitation.allowed_hosts: %s).\n", demoAllowedHost)
	fmt.Fprintln(out)
	failures := 0
	for i, ec := range demoElicitCases {
		if !runDemoElicitCase(ctx, out, first+i, ec, host, self, cfgPath, dlog) {
			failures++
		}
	}
	return failures
}

func runDemoElicitCase(ctx context.Context, out io.Writer, n int, ec demoElicitCase, host *demopeer.Host, self, cfgPath, dlog string) bool {
	var got *demopeer.Outcome
	asked := host.Elicited()
	sent := demoExchange(ctx, out, n, ec.title, elicitSummary(ec.params), ec.approve, self, cfgPath, dlog, func() (err error) {
		got, err = host.Elicit(ctx, json.RawMessage(ec.params))
		return err
	})
	return sent && reportElicitOutcome(out, ec, got, host.Elicited() > asked)
}

func reportElicitOutcome(out io.Writer, ec demoElicitCase, got *demopeer.Outcome, asked bool) bool {
	fmt.Fprintf(out, "   user asked by the host: %s\n", yesNo(asked))
	ok := asked == ec.hostAsked
	if got.Error != nil {
		fmt.Fprintf(out, "   upstream got error %d %q\n", got.Error.Code, got.Error.Message)
		ok = false
	} else {
		fmt.Fprintf(out, "   upstream got %s\n", got.Result)
		ok = ok && demoSameResult(got.Result, ec.want)
	}
	if !ok {
		fmt.Fprintln(out, "   UNEXPECTED")
	}
	fmt.Fprintln(out)
	return ok
}

// demoElicitAnswer is the demo user: it fills in a form's name, and
// accepts going to a URL.
func demoElicitAnswer(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Mode == "url" {
		return json.RawMessage(`{"action":"accept"}`), nil
	}
	return json.RawMessage(`{"action":"accept","content":{"name":"Ada Lovelace"}}`), nil
}

// elicitSummary is what an elicitation asks, in one line: its mode and
// message, then the form's field names or the URL.
func elicitSummary(params string) string {
	var p struct {
		Mode    string `json:"mode"`
		Message string `json:"message"`
		URL     string `json:"url"`
		Schema  struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"requestedSchema"`
	}
	if json.Unmarshal([]byte(params), &p) != nil {
		return params
	}
	if p.Mode == "url" {
		return fmt.Sprintf("url %q → %s", p.Message, p.URL)
	}
	names := slices.Sorted(maps.Keys(p.Schema.Properties))
	return fmt.Sprintf("form %q, fields: %s", p.Message, strings.Join(names, ", "))
}

func demoSameResult(got json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && reflect.DeepEqual(a, b)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
