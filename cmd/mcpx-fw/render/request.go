package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// samplingView lays out a sampling request and a completion: settings,
// the system prompt, messages and tools offered. It touches nothing but
// the fold count of its view.
type samplingView struct{ *view }

// requestShown are the request members request lays out by name; any
// other member is shown after the tools, so the operator sees everything
// the host's model (or the host) gets.
var requestShown = []string{"maxTokens", "includeContext", "temperature", "stopSequences", "modelPreferences",
	"metadata", "systemPrompt", "messages", "tools", "toolChoice"}

// request lays out sampling params: the settings the model runs with, the
// system prompt, every message, the tools offered, and any other member.
func (v samplingView) request(w io.Writer, req map[string]any) {
	v.settings(w, req)
	if sp, ok := req["systemPrompt"]; ok && sp != "" {
		fmt.Fprintln(w, "\nSystem prompt:")
		writeLines(w, "  ", v.prose("systemPrompt", sp))
	}
	msgs, _ := req["messages"].([]any)
	fmt.Fprintf(w, "\nMessages (%d):\n", len(msgs))
	for i, m := range msgs {
		title := fmt.Sprintf("  [%d]", i+1)
		if msg, ok := m.(map[string]any); ok {
			v.message(w, title+" "+v.word(msg["role"]), msg)
		} else {
			writeLines(w, "", v.member(title, "", m, 1))
		}
	}
	v.tools(w, req)
	if rest := v.members(req, nil, requestShown...); len(rest) > 0 {
		fmt.Fprintln(w, "\nOther members of the request:")
		writeLines(w, "  ", rest)
	}
}

// settings is the line of maxTokens, includeContext, temperature and stop
// sequences, then the model preferences and metadata.
func (v samplingView) settings(w io.Writer, req map[string]any) {
	fmt.Fprintf(w, "\nmaxTokens: %s   includeContext: %s", v.word(orNone(req["maxTokens"])), v.word(orNone(req["includeContext"])))
	for _, k := range []string{"temperature", "stopSequences"} {
		if val, ok := req[k]; ok {
			s, _ := v.fit(val, k, flatDepth)
			fmt.Fprintf(w, "   %s: %s", k, s)
		}
	}
	fmt.Fprintln(w)
	for _, k := range []string{"modelPreferences", "metadata"} {
		if val, ok := req[k]; ok {
			writeLines(w, "", v.member(k, k, val, 0))
		}
	}
}

// message lays out one message under its title line (which shows its
// role): its blocks, then every member but role, content and skip.
func (v samplingView) message(w io.Writer, title string, msg map[string]any, skip ...string) {
	fmt.Fprintln(w, title+":")
	lines := contentView{v.view}.blocks(msg["content"])
	lines = append(lines, v.members(msg, nil, slices.Concat(skip, []string{"role", "content"})...)...)
	writeLines(w, "      ", lines)
}

// tools lays out the tools offered to the model, each whole: name,
// description, schemas, annotations and the rest.
func (v samplingView) tools(w io.Writer, req map[string]any) {
	tools, _ := req["tools"].([]any)
	if len(tools) == 0 {
		fmt.Fprint(w, "\nTools offered: none")
		if _, ok := req["toolChoice"]; ok {
			fmt.Fprintf(w, ", tool choice %s", v.toolChoice(req["toolChoice"]))
		}
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "\nTools offered (%d), tool choice %s:\n", len(tools), v.toolChoice(req["toolChoice"]))
	for _, t := range tools {
		writeLines(w, "  ", v.tool(t))
	}
}

// toolChoice is the mode, "auto (default)" when none is given, or the
// whole toolChoice when it holds more than a mode.
func (v samplingView) toolChoice(tc any) string {
	m, isMap := tc.(map[string]any)
	mode, isString := m["mode"].(string)
	switch {
	case tc == nil || isMap && len(m) == 0:
		return "auto (default)"
	case len(m) == 1 && isString:
		return inert.Word(mode)
	}
	s, _ := v.fit(tc, "toolChoice", flatDepth)
	return s
}

// toolFirst is the order of a tool's members after its name and
// description.
var toolFirst = []string{"title", "inputSchema", "outputSchema", "annotations"}

// tool is one tool offered: "- name: description" (a description of more
// than one line under it), then its other members.
func (v samplingView) tool(t any) []string {
	tm, ok := t.(map[string]any)
	if !ok {
		return v.member("-", "", t, 1)
	}
	head := "- " + v.word(tm["name"]) + ":"
	var lines []string
	switch d, isString := tm["description"].(string); {
	case tm["description"] == nil || d == "" && isString:
		head += " (no description)"
	case isString && !strings.Contains(d, "\n"):
		head += " " + inert.Line(d)
	default:
		lines = v.prose("description", tm["description"])
	}
	lines = append(lines, v.members(tm, toolFirst, "name", "description")...)
	return append([]string{head}, indentLines(lines, "    ")...)
}

// completion lays out a completion: its role, the model and why it
// stopped, then its blocks (tool calls with their whole input) and any
// other member.
func (v samplingView) completion(w io.Writer, res map[string]any) {
	title := fmt.Sprintf("  %s (model %s", v.word(res["role"]), v.word(res["model"]))
	if sr, ok := res["stopReason"]; ok {
		title += ", stopReason " + v.word(sr)
	}
	v.message(w, title+")", res, "model", "stopReason")
}

func writeLines(w io.Writer, pad string, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, pad+l)
	}
}
