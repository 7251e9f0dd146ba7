package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// The hosts of the elicitation and roots end-to-end tests: the Go SDK
// client and the npm @modelcontextprotocol/client 2.x, each at 2025-11-25
// and at 2026-07-28, declaring sampling, elicitation (form and URL) and
// roots, and answering alike (elicitAnswer here, formContent in
// testdata/npm/host2026.mjs), so a tool's result is the same whichever
// host asked.

// elicitCall is one tool call a host makes, and how it answers the
// elicitation requests that reach it during the call.
type elicitCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	// Elicit is accept (the default: a form's content from its schema, a
	// URL accepted), decline, cancel, or extra (accept with a key the
	// schema does not have: an answer that breaks it).
	Elicit string `json:"elicit,omitempty"`
}

// elicitOutcome is what one call did, as the host saw it.
type elicitOutcome struct {
	Text    string // the result's text blocks, joined
	IsError bool
	Code    int64  // non-zero: the call failed with this JSON-RPC error
	Message string // its message
	// What the host was asked during the call. RootsAsked is -1 where the
	// host cannot count: the Go SDK answers a 2026-07-28 roots input
	// request itself.
	Elicited, Sampled, RootsAsked int
}

func (o elicitOutcome) String() string {
	if o.Code != 0 {
		return fmt.Sprintf("error %d %q (asked: %d elicitation, %d sampling, %d roots)", o.Code, o.Message, o.Elicited, o.Sampled, o.RootsAsked)
	}
	return fmt.Sprintf("result %q isError=%v (asked: %d elicitation, %d sampling, %d roots)", o.Text, o.IsError, o.Elicited, o.Sampled, o.RootsAsked)
}

// elicitHost is one kind of host. run starts command (a server, or
// `mcpx-fw serve`) as its stdio peer and makes the calls in turn on one
// connection.
type elicitHost struct {
	name    string
	version string
	npm     bool
	run     func(t *testing.T, command []string, calls []elicitCall) []elicitOutcome
}

// e2eRoots are the roots every host declares (URIs, no names); roots.allow
// narrows them to the first.
var e2eRoots = []string{"file:///srv/e2e/allowed", "file:///srv/e2e/other"}

// e2eSamplingAnswer is the completion every host gives (the npm host's
// fixed answer), for tools that also sample.
const e2eSamplingAnswer = `{"role":"assistant","model":"npm-host","content":{"type":"text","text":"npm-host says hi"}}`

func elicitHosts() []elicitHost {
	return []elicitHost{
		{"go-2025-11-25", "2025-11-25", false, goElicitRun("2025-11-25")},
		{"go-2026-07-28", "2026-07-28", false, goElicitRun("2026-07-28")},
		{"npm-2025-11-25", "2025-11-25", true, npmElicitRun("legacy")},
		{"npm-2026-07-28", "2026-07-28", true, npmElicitRun("pin")},
	}
}

// goElicitRun is the Go SDK client (relay/peer's host) at version.
func goElicitRun(version string) func(*testing.T, []string, []elicitCall) []elicitOutcome {
	return func(t *testing.T, command []string, calls []elicitCall) []elicitOutcome {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var how atomic.Value
		how.Store("accept")
		h, err := peer.StartHost(ctx, peer.HostOptions{Command: command, ProtocolVersion: version, Roots: e2eRoots,
			Answer: answerWith(e2eSamplingAnswer),
			Elicit: func(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
				return elicitAnswer(how.Load().(string), params)
			}})
		if err != nil {
			t.Fatalf("start %v: %v", command, err)
		}
		defer h.Close()
		out := make([]elicitOutcome, 0, len(calls))
		for _, c := range calls {
			how.Store(cmpOr(c.Elicit, "accept"))
			roots := h.RootsAsked()
			var o elicitOutcome
			args := c.Arguments
			if args == nil {
				args = map[string]any{} // the SDK would send null, which a server may refuse
			}
			res, err := h.CallTool(ctx, c.Name, args)
			var pe *peer.Error
			switch {
			case errors.As(err, &pe):
				o.Code, o.Message = pe.Code, pe.Message
			case err != nil:
				t.Fatalf("call %s: %v", c.Name, err)
			default:
				o.Text, o.IsError = res.Text, res.IsError
			}
			o.Elicited, o.Sampled = drain(h.Elicited), drain(h.Asked)
			o.RootsAsked = h.RootsAsked() - roots
			if version == "2026-07-28" {
				o.RootsAsked = -1
			}
			out = append(out, o)
		}
		return out
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// drain counts what has arrived on ch so far.
func drain(ch chan json.RawMessage) int {
	n := 0
	for len(ch) > 0 {
		<-ch
		n++
	}
	return n
}

// elicitAnswer is the Go host's answer to an elicitation request, the same
// as testdata/npm/host2026.mjs gives.
func elicitAnswer(how string, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Mode            string          `json:"mode"`
		URL             string          `json:"url"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	switch {
	case how == "decline" || how == "cancel":
		return json.Marshal(map[string]string{"action": how})
	case p.Mode == "url" || p.URL != "":
		return json.RawMessage(`{"action":"accept"}`), nil
	}
	content, err := formContent(p.RequestedSchema)
	if err != nil {
		return nil, err
	}
	if how == "extra" {
		content["notInTheSchema"] = "extra"
	}
	return json.Marshal(map[string]any{"action": "accept", "content": content})
}

// formProp is what formValue reads of one property of a requested schema.
type formProp struct {
	Type    string          `json:"type"`
	Format  string          `json:"format"`
	Default json.RawMessage `json:"default"`
	Enum    []any           `json:"enum"`
	OneOf   []struct {
		Const any `json:"const"`
	} `json:"oneOf"`
	AnyOf []struct {
		Const any `json:"const"`
	} `json:"anyOf"`
	Minimum *float64  `json:"minimum"`
	Items   *formProp `json:"items"`
}

// formContent answers every property of a form: its default, else its
// first choice, else a fixed value of its type and format.
func formContent(schema json.RawMessage) (map[string]any, error) {
	var s struct {
		Properties map[string]formProp `json:"properties"`
	}
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &s); err != nil {
			return nil, err
		}
	}
	content := map[string]any{}
	for name, p := range s.Properties {
		content[name] = formValue(p)
	}
	return content, nil
}

func formValue(p formProp) any {
	if len(p.Default) > 0 {
		return p.Default
	}
	if p.Type == "array" {
		if p.Items == nil {
			return []any{}
		}
		if first, ok := firstChoice(*p.Items); ok {
			return []any{first}
		}
		return []any{}
	}
	if first, ok := firstChoice(p); ok {
		return first
	}
	switch p.Type {
	case "boolean":
		return true
	case "integer", "number":
		if p.Minimum != nil {
			return *p.Minimum
		}
		return 1
	}
	if v, ok := map[string]string{"email": "host@example.com", "uri": "https://example.com/", "date": "2000-01-01",
		"date-time": "2000-01-01T00:00:00Z"}[p.Format]; ok {
		return v
	}
	return "host"
}

func firstChoice(p formProp) (any, bool) {
	switch {
	case len(p.Enum) > 0:
		return p.Enum[0], true
	case len(p.OneOf) > 0:
		return p.OneOf[0].Const, true
	case len(p.AnyOf) > 0:
		return p.AnyOf[0].Const, true
	}
	return nil, false
}

// npmElicitRun is @modelcontextprotocol/client 2.x (testdata/npm/host2026.mjs)
// in mode (pin: exactly 2026-07-28; legacy: 2025 initialize only).
func npmElicitRun(mode string) func(*testing.T, []string, []elicitCall) []elicitOutcome {
	return func(t *testing.T, command []string, calls []elicitCall) []elicitOutcome {
		t.Helper()
		node := nodeSetup(t) // before the deadline: the first call installs
		rawCalls, _ := json.Marshal(calls)
		roots := make([]map[string]string, len(e2eRoots))
		for i, uri := range e2eRoots {
			roots[i] = map[string]string{"uri": uri}
		}
		rawRoots, _ := json.Marshal(roots)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		args := append([]string{repoPath(t, "testdata/npm/host2026.mjs"), "--mode", mode, "--elicit", "accept",
			"--roots", string(rawRoots), "--calls", string(rawCalls)}, command...)
		var stderr strings.Builder
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Stderr = &stderr
		raw, _ := cmd.Output()
		var got struct {
			Calls []struct {
				Result *struct {
					Content []struct{ Text string }
					IsError bool
				}
				Error *struct {
					Code    any // a JSON-RPC code, or the SDK's own name for a failure of its own
					Message string
				}
				Elicited, Sampled, RootsAsked int
			}
			Error *struct{ Message string }
		}
		if err := json.Unmarshal(raw, &got); err != nil || got.Error != nil || len(got.Calls) != len(calls) {
			t.Fatalf("npm host printed %q (%v); stderr:\n%s", raw, err, stderr.String())
		}
		out := make([]elicitOutcome, len(calls))
		for i, c := range got.Calls {
			o := elicitOutcome{Elicited: c.Elicited, Sampled: c.Sampled, RootsAsked: c.RootsAsked}
			switch {
			case c.Error != nil:
				o.Message = c.Error.Message
				if code, ok := c.Error.Code.(float64); ok && code != 0 {
					o.Code = int64(code)
				} else { // a failure of the client itself, not a JSON-RPC error
					o.Code, o.Message = -32000, fmt.Sprint(c.Error.Code, ": ", c.Error.Message)
				}
			case c.Result != nil:
				for _, b := range c.Result.Content {
					o.Text += b.Text
				}
				o.IsError = c.Result.IsError
			}
			out[i] = o
		}
		return out
	}
}

// firewallCommand is the host's command for `mcpx-fw serve` with cfg.
func firewallCommand(cfg string) []string { return []string{binary, "serve", "--config", cfg} }
