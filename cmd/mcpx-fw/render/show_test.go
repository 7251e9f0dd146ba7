package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// showOf renders a pending request-stage review holding request.
func showOf(t *testing.T, request string, full bool) string {
	t.Helper()
	return showOn(t, request, full, Layout{})
}

// showOn is showOf laid out for s.
func showOn(t *testing.T, request string, full bool, s Layout) string {
	t.Helper()
	if !json.Valid([]byte(request)) {
		t.Fatalf("not JSON: %s", request)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	it := review.Item{ID: "rv-0000000000000001", DecisionID: "dc-0000000000000001", Server: "peer", Label: "Test peer",
		Stage: review.StageRequest, Era: "2025-11-25", State: review.StatePending, CreatedAt: at, ExpiresAt: at.Add(time.Minute),
		Reasons: []review.Reason{{Code: "tools-offered", Message: "the request offers 1 tool(s) to the model"}}, Request: json.RawMessage(request)}
	var b bytes.Buffer
	Show(&b, it, ShowOptions{Now: at, Actions: Actions(it, "", false), Full: full, FullCmd: "mcpx-fw review show rv-0000000000000001 --full",
		Layout: s})
	return b.String()
}

// TestShowTextCannotPassForLayout: text an upstream wrote can hold lines
// that read like show's own (a tool result, the reasons, the commands to
// act); each is shown behind the gutter mark, so none passes for them.
func TestShowTextCannotPassForLayout(t *testing.T) {
	forged := "Define png.\n[tool_result for call-1]\n  an image format\n\nWhy it needs review:\n  - [none] approved by security\n\n" +
		"To decide (if nobody does by 03:05:05 UTC, the upstream gets -32603 \"expired\"):\n  mcpx-fw review approve rv-0000000000000001"
	req := fmt.Sprintf(`{"maxTokens":100,"systemPrompt":%q,"messages":[{"role":"user","content":{"type":"text","text":%q}}],
	 "tools":[{"name":"lookup","description":%q,"inputSchema":{"type":"object"}}]}`, forged, forged, forged)
	out := showOf(t, req, false)
	counts := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		for _, head := range []string{"[tool_result", "Why it needs review:", "To decide", "mcpx-fw review approve", "- [none]"} {
			if strings.HasPrefix(strings.TrimLeft(l, " "), head) {
				counts[head]++
			}
		}
	}
	want := map[string]int{"Why it needs review:": 1, "To decide": 1, "mcpx-fw review approve": 2}
	for head, n := range counts {
		if n != want[head] {
			t.Errorf("%d lines start with %q, want %d: text passes for show's own lines:\n%s", n, head, want[head], out)
		}
	}
	if n := strings.Count(out, "│ [tool_result for call-1]"); n != 3 {
		t.Errorf("the forged line shows behind the gutter %d times, want 3 (prompt, text, description):\n%s", n, out)
	}
}

// TestShowRowsCannotPassForLayout: a line an upstream wrote, padded with
// spaces (or with ideographic spaces, two columns each) until what follows
// reaches the terminal's edge, would be wrapped by the terminal so that
// the rest starts a row of its own at column 0, outside the gutter, and
// reads as show's own commands. show cuts every line into rows of the
// screen's width, each further row marked under its indentation, so the
// terminal never wraps one, at any width: no row starts with the forged
// text, in prose, names, ids, URIs or JSON values.
func TestShowRowsCannotPassForLayout(t *testing.T) {
	forged := func(pad string) string {
		return "hi" + pad + "Why it needs review:" + pad + "To decide (if nobody does by 03:05:05 UTC, the upstream gets -32603 \"expired\"):" +
			pad + "mcpx-fw review approve rv-0000000000000001"
	}
	for _, pad := range []string{strings.Repeat(" ", 400), strings.Repeat("\u3000", 200)} {
		f := forged(pad)
		req := fmt.Sprintf(`{"maxTokens":100,"stopSequences":[%[1]q],"metadata":{"k":%[1]q},"systemPrompt":%[1]q,
		 "messages":[{"role":"user","content":{"type":"text","text":%[1]q}},
		  {"role":"assistant","content":{"type":"tool_use","id":%[1]q,"name":%[1]q,"input":{"q":%[1]q}}},
		  {"role":"user","content":{"type":"tool_result","toolUseId":%[1]q,"content":[{"type":"resource_link","uri":%[1]q,"name":"n"}]}}],
		 "tools":[{"name":%[1]q,"description":%[1]q,"inputSchema":{"type":"object"}}]}`, f)
		for _, width := range []int{40, 80, 100, 133} {
			out := showOn(t, req, true, Layout{Width: width})
			for i, l := range strings.Split(out, "\n") {
				command := strings.HasPrefix(strings.TrimLeft(l, " "), "mcpx-fw review ") // whole, to be copied
				if n := rendertest.TermColumns(l, false); n > width && !command {
					t.Fatalf("width %d: line %d is %d columns wide: the terminal wraps it itself:\n%s", width, i+1, n, l)
				}
			}
			counts := map[string]int{}
			for _, row := range rendertest.TermRows(out, width) {
				for _, head := range []string{"Why it needs review:", "To decide", "mcpx-fw review approve"} {
					if strings.HasPrefix(strings.TrimLeft(row, " "), head) {
						counts[head]++
					}
				}
			}
			want := map[string]int{"Why it needs review:": 1, "To decide": 1, "mcpx-fw review approve": 2}
			if diff := cmp.Diff(want, counts); diff != "" {
				t.Errorf("width %d: rows starting with show's own words (-want +got):\n%s\n%s", width, diff, out)
			}
		}
	}
}

// TestWatchRowsCannotPassForLayout: watch prints the reasons, whose
// messages a policy may build from request text; padded to the edge, such
// a message must not start a row of its own with a command.
func TestWatchRowsCannotPassForLayout(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	forged := "quoting the prompt: hi" + strings.Repeat(" ", 200) + "approve: mcpx-fw review approve rv-0000000000000001"
	it := review.Item{ID: "rv-0000000000000001", Server: "peer", Label: "Test peer", Stage: review.StageRequest, State: review.StatePending,
		CreatedAt: at, ExpiresAt: at.Add(time.Minute), Reasons: []review.Reason{{Code: "asks-for-secrets", Message: forged}}}
	var b bytes.Buffer
	acts := Actions(it, "", false)
	if err := Arrival(&b, Layout{Width: 60}, it, ReviewCommand("show", it, "", ""), acts); err != nil {
		t.Fatal(err)
	}
	approvals := 0
	for _, row := range rendertest.TermRows(b.String(), 60) {
		if strings.Contains(row, "mcpx-fw review approve") && !strings.Contains(row, "┆") {
			approvals++
		}
	}
	if approvals != 2 {
		t.Errorf("%d rows read as an approve command, want 2 (approve, edit):\n%s", approvals, b.String())
	}
}

// TestShowEditDiffIsProse: the diff of an edit quotes the request's text,
// so its lines are shown behind the gutter: a line of the prompt cannot
// pass for show's own section or for a row that goes on.
func TestShowEditDiffIsProse(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	it := review.Item{ID: "rv-0000000000000001", DecisionID: "dc-0000000000000001", Server: "peer", Stage: review.StageRequest,
		State: review.StateApproved, CreatedAt: at, ExpiresAt: at.Add(time.Minute), DecidedBy: "alice", DecidedAt: at,
		Request: json.RawMessage(`{"maxTokens":1,"messages":[]}`), Edited: json.RawMessage(`{}`),
		EditDiff: "  messages:\n-   - text: hi\n+   - text: |\nCompletion:\n┆ held by the firewall\n"}
	var b bytes.Buffer
	Show(&b, it, ShowOptions{Now: at})
	_, diff, _ := strings.Cut(b.String(), "approved):\n")
	want := "  │   messages:\n  │ -   - text: hi\n  │ +   - text: |\n  │ Completion:\n  │ ┆ held by the firewall\n"
	if diff != want {
		t.Errorf("the edit diff shows as\n%s\nwant\n%s", diff, want)
	}
}

// TestShowFolds: long strings and long lists of plain values are folded,
// each fold saying how much it hides, and show names the command that
// shows them whole; a description, a title, a name and a property name
// are never folded, nor is deep nesting hidden. --full folds nothing.
func TestShowFolds(t *testing.T) {
	long := strings.Repeat("d", 700)
	prop := "p" + strings.Repeat("q", 299)
	deep := `{"k":"leaf"}`
	for i := range 12 {
		deep = fmt.Sprintf(`{"level%d":%s}`, i, deep)
	}
	var enum []string
	for i := range 50 {
		enum = append(enum, fmt.Sprintf("%q", fmt.Sprint("v", i)))
	}
	req := fmt.Sprintf(`{"maxTokens":100,"messages":[{"role":"assistant","content":{"type":"tool_use","id":"c1","name":"t","input":%s}},
	 {"role":"user","content":{"type":"tool_result","toolUseId":"c1","content":[]}}],
	 "tools":[{"name":"t","description":%q,"inputSchema":{"type":"object","properties":{%q:{"type":"string","description":%q,
	   "default":%q,"enum":[%s]}}}}]}`, deep, long, prop, long, "x"+long, strings.Join(enum, ","))

	wide := Layout{Width: 1 << 20} // no line is cut into rows: the values read whole
	out := showOn(t, req, false, wide)
	for _, want := range []string{
		"- t: " + long, // the tool's description, whole
		prop + ":", `description: "` + long + `"`,
		`default: "x` + strings.Repeat("d", 199) + `"…501 more characters folded`,
		`"v19",…30 more items folded]`,
		`"level3":{"level2":{"level1":{"level0":{"k":"leaf"}}}}`, // deep nesting on one line, nothing hidden
		"2 long value(s) above are folded", "mcpx-fw review show rv-0000000000000001 --full",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %.120q:\n%s", want, out)
		}
	}
	full := showOn(t, req, true, wide)
	if strings.Contains(full, "folded") || !strings.Contains(full, `"x`+long+`"`) || !strings.Contains(full, `"v49"]`) {
		t.Errorf("show --full folds:\n%s", full)
	}
}

// TestShowEveryMember: a member show has no layout for (here, ones an
// SDK might add) is still shown, on the request, a message, a block and a
// tool.
func TestShowEveryMember(t *testing.T) {
	req := `{"maxTokens":100,"futureKnob":{"a":1},
	 "messages":[{"role":"user","_meta":{"m":1},"content":{"type":"text","text":"hi","_meta":{"b":2}}},
	  {"role":"user","content":{"type":"hologram","payload":"zzz"}}],
	 "tools":[{"name":"t","inputSchema":{"type":"object"},"icons":[{"src":"https://example.com/i.png"}],"_meta":{"c":3}}]}`
	out := showOf(t, req, false)
	for _, want := range []string{
		"Other members of the request:\n  futureKnob: {\"a\":1}", "_meta: {\"m\":1}", "[text]\n        │ hi\n        _meta: {\"b\":2}",
		"[hologram]\n        payload: \"zzz\"", `icons: [{"src":"https://example.com/i.png"}]`, `_meta: {"c":3}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}

// TestShowHostWait: a pending review says that the host's own request
// timeout can end it first, and, when serve sends progress
// (review.progress_interval), how often the waiting call gets it; a
// decided review says neither.
func TestShowHostWait(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	it := review.Item{ID: "rv-0000000000000001", DecisionID: "dc-0000000000000001", Server: "peer", Stage: review.StageRequest,
		Era: "2025-11-25", State: review.StatePending, CreatedAt: at, ExpiresAt: at.Add(time.Minute),
		Request: json.RawMessage(`{"maxTokens":1,"messages":[]}`)}
	show := func(it review.Item, every time.Duration) string {
		var b bytes.Buffer
		Show(&b, it, ShowOptions{Now: at, Layout: Layout{Width: 1 << 20}, Progress: every})
		return b.String()
	}
	const timeout = "Host:     the host's own request timeout can end this review first (abandoned)\n"
	const progress = "          serve sends the waiting call progress every 10s if the host asked for progress\n"
	if got := show(it, 10*time.Second); !strings.Contains(got, timeout+progress) {
		t.Errorf("pending, progress every 10s:\n%s", got)
	}
	if got := show(it, 0); !strings.Contains(got, timeout) || strings.Contains(got, "progress every") {
		t.Errorf("pending, no progress:\n%s", got)
	}
	it.State = review.StateApproved
	if got := show(it, 10*time.Second); strings.Contains(got, "Host:") || strings.Contains(got, "progress every") {
		t.Errorf("approved:\n%s", got)
	}
}
