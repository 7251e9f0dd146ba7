package render

import (
	"fmt"
	"io"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// rootsView lays out a request for the host's roots and the list the
// host answers with. It touches nothing but the fold count of its view.
type rootsView struct{ *view }

// rootsRequest lays out a request for the host's roots: it asks for
// nothing but the list, so only what else it holds is shown.
func (v rootsView) rootsRequest(w io.Writer, req map[string]any) {
	fmt.Fprintln(w, "\nThe upstream asks for the host's roots (the folders and files the host lets servers see);")
	fmt.Fprintln(w, "the list the host answers with is checked by the policy again before the upstream gets it.")
	if rest := v.members(req, nil); len(rest) > 0 {
		fmt.Fprintln(w, "\nOther members of the request:")
		writeLines(w, "  ", rest)
	}
}

// roots lays out the host's roots as the upstream would get them: each
// root's URI and name, whole, then anything else a root or the result
// holds.
func (v rootsView) roots(w io.Writer, it review.Item, res map[string]any) {
	list, isList := res["roots"].([]any)
	held := ""
	if it.State == review.StatePending {
		held = "; held: the upstream gets this list only if you approve"
	}
	fmt.Fprintf(w, "\nRoots (%d%s):\n", len(list), held)
	if !isList {
		writeLines(w, "  ", v.member("roots", "roots", orNone(res["roots"]), 1))
	}
	for _, r := range list {
		rm, isMap := r.(map[string]any)
		if !isMap {
			writeLines(w, "  ", v.member("-", "", r, 1))
			continue
		}
		line := "- " + v.rootText(rm, "uri")
		if _, ok := rm["name"]; ok {
			line += "  name " + v.rootText(rm, "name")
		}
		writeLines(w, "  ", append([]string{line}, indentLines(v.members(rm, nil, "uri", "name"), "    ")...))
	}
	if rest := v.members(res, nil, "roots"); len(rest) > 0 {
		fmt.Fprintln(w, "\nOther members of the result:")
		writeLines(w, "  ", rest)
	}
}

// rootText is a root's uri or name quoted whole (never folded: it is what
// the upstream may reach).
func (v rootsView) rootText(rm map[string]any, key string) string {
	if s, ok := rm[key].(string); ok {
		return inert.Quote(s)
	}
	if _, ok := rm[key]; !ok {
		return "(none)"
	}
	s, _ := v.fit(rm[key], "name", flatDepth)
	return s
}
