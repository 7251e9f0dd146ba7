package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// itemJSON is the machine-readable shape of a review (DESIGN §7).
type itemJSON struct {
	ID        string          `json:"id"`
	Server    string          `json:"server"`
	Stage     string          `json:"stage"`
	State     string          `json:"state"`
	CreatedAt time.Time       `json:"created_at"`
	ExpiresAt time.Time       `json:"expires_at"`
	Reasons   []review.Reason `json:"reasons"`
	// show only:
	DecisionID string          `json:"decision_id,omitempty"`
	Label      string          `json:"label,omitempty"`
	Era        string          `json:"era,omitempty"`
	DecidedBy  string          `json:"decided_by,omitempty"`
	Note       string          `json:"note,omitempty"`
	Request    json.RawMessage `json:"request,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Parent     string          `json:"parent,omitempty"`
	DecidedAt  time.Time       `json:"decided_at,omitzero"`
	Edited     json.RawMessage `json:"edited,omitempty"`
	EditDiff   string          `json:"edit_diff,omitempty"`
	Answer     json.RawMessage `json:"answer,omitempty"`
	ErasedAt   time.Time       `json:"erased_at,omitzero"`
}

func summary(it review.Item) itemJSON {
	reasons := it.Reasons
	if reasons == nil {
		reasons = []review.Reason{}
	}
	return itemJSON{ID: it.ID, Server: it.Server, Stage: it.Stage, State: string(it.State),
		CreatedAt: it.CreatedAt.UTC(), ExpiresAt: it.ExpiresAt.UTC(), Reasons: reasons}
}

func listJSON(items []review.Item) []itemJSON {
	out := make([]itemJSON, len(items))
	for i, it := range items {
		out[i] = summary(it)
	}
	return out
}

func showJSON(it review.Item) itemJSON {
	j := summary(it)
	j.DecisionID, j.Label, j.Era, j.DecidedBy, j.Note = it.DecisionID, it.Label, it.Era, it.DecidedBy, it.Note
	j.Request, j.Result, j.Parent, j.DecidedAt = it.Request, it.Result, it.Parent, it.DecidedAt
	j.Edited, j.EditDiff, j.Answer, j.ErasedAt = it.Edited, it.EditDiff, it.Answer, it.ErasedAt
	return j
}

// renderList prints the queue as a table: what waits, from whom, why.
func renderList(w io.Writer, items []review.Item, now time.Time) {
	if len(items) == 0 {
		fmt.Fprintln(w, "no reviews waiting (mcpx-fw review list --all shows decided ones)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVER\tSTAGE\tSTATE\tLEFT\tREASONS")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.ID, it.Server, it.Stage, it.State, left(it, now), reasonCodes(it.Reasons))
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nmcpx-fw review show ID shows the whole request and the commands to decide it.")
}

func left(it review.Item, now time.Time) string {
	if it.State != review.StatePending {
		return "-"
	}
	d := it.ExpiresAt.Sub(now).Round(time.Second)
	if d < 0 {
		return "0s"
	}
	return d.String()
}

// renderShow prints everything a person needs to decide: who asks (the
// configured name and label, not what the server claims), why it was
// escalated, the whole request (and at stage two the completion beside
// it), what an operator changed or wrote, and the exact commands to act.
func renderShow(w io.Writer, it review.Item, now time.Time, acts []action) {
	fmt.Fprintf(w, "Review %s  (decision %s)\n", it.ID, it.DecisionID)
	fmt.Fprintf(w, "Server:   %s — %s\n", it.Server, it.Label)
	fmt.Fprintf(w, "Stage:    %s   Protocol: %s   State: %s\n", stageWords(it), it.Era, it.State)
	if it.Parent != "" {
		fmt.Fprintf(w, "Follows:  review %s, which let the request through\n", it.Parent)
	}
	fmt.Fprintf(w, "Created:  %s   Expires: %s", it.CreatedAt.Format(time.RFC3339), it.ExpiresAt.Format(time.RFC3339))
	if it.State == review.StatePending {
		fmt.Fprintf(w, " (%s left)", left(it, now))
	}
	fmt.Fprintln(w)
	renderDecided(w, it)
	fmt.Fprintln(w, "\nWhy it needs review:")
	for _, r := range it.Reasons {
		fmt.Fprintf(w, "  - [%s] %s\n", r.Code, printable(r.Message))
	}
	if !it.ErasedAt.IsZero() {
		fmt.Fprintf(w, "\nThe prompt and completion text were erased at %s (review.retain); mcpx-fw audit keeps their digests.\n",
			it.ErasedAt.Format(time.RFC3339))
		return
	}
	renderRequest(w, it.Request)
	renderCompletion(w, it)
	renderOperatorWork(w, it)
	if it.State == review.StatePending {
		renderActions(w, it, acts)
	}
}

// stageWords says what is held at each stage.
func stageWords(it review.Item) string {
	if it.Stage == review.StageResult {
		return "result (the completion is held)"
	}
	return "request (the prompt is held)"
}

func renderDecided(w io.Writer, it review.Item) {
	switch {
	case it.DecidedBy != "":
		fmt.Fprintf(w, "Decided:  %s by %s at %s", approvalWords(it), it.DecidedBy, it.DecidedAt.Format(time.RFC3339))
	case !it.DecidedAt.IsZero():
		fmt.Fprintf(w, "Closed:   %s at %s", it.State, it.DecidedAt.Format(time.RFC3339))
	default:
		return
	}
	if it.Note != "" {
		fmt.Fprintf(w, " — %s", printable(it.Note))
	}
	fmt.Fprintln(w)
	if !it.FinishedAt.IsZero() {
		fmt.Fprintf(w, "Finished: %s at %s — %s\n", it.State, it.FinishedAt.Format(time.RFC3339), printable(it.FinishNote))
	}
}

func approvalWords(it review.Item) string {
	switch {
	case it.State == review.StateRejected:
		return "rejected"
	case it.Answer != nil:
		return "answered"
	case it.Edited != nil:
		return "approved with edits"
	}
	return "approved"
}

// renderCompletion shows a held completion after the request it answers.
func renderCompletion(w io.Writer, it review.Item) {
	if len(it.Result) == 0 {
		return
	}
	if it.State == review.StatePending {
		fmt.Fprintln(w, "\nCompletion (held: the upstream gets it only if you approve):")
	} else {
		fmt.Fprintln(w, "\nCompletion:")
	}
	renderMessage(w, 0, decodeObject(it.Result))
}

// renderOperatorWork shows what the approver changed, or the completion
// they wrote.
func renderOperatorWork(w io.Writer, it review.Item) {
	if it.EditDiff != "" {
		fmt.Fprintf(w, "\nEdited by %s before approval (- original, + approved):\n%s", it.DecidedBy, indent(printable(strings.TrimSuffix(it.EditDiff, "\n")), "  "))
		fmt.Fprintln(w)
	}
	if len(it.Answer) > 0 {
		fmt.Fprintf(w, "\nAnswer written by %s:\n", it.DecidedBy)
		renderMessage(w, 0, decodeObject(it.Answer))
	}
}

func renderRequest(w io.Writer, raw json.RawMessage) {
	req := decodeObject(raw)
	fmt.Fprintf(w, "\nmaxTokens: %v   includeContext: %v", req["maxTokens"], orNone(req["includeContext"]))
	if stops, ok := req["stopSequences"].([]any); ok && len(stops) > 0 {
		quoted, _ := json.Marshal(stops)
		fmt.Fprintf(w, "   stopSequences: %s", printable(string(quoted)))
	}
	fmt.Fprintln(w)
	if sp, ok := req["systemPrompt"].(string); ok && sp != "" {
		fmt.Fprintf(w, "\nSystem prompt:\n%s\n", indent(printable(sp), "  "))
	}
	msgs, _ := req["messages"].([]any)
	fmt.Fprintf(w, "\nMessages (%d):\n", len(msgs))
	for i, m := range msgs {
		msg, _ := m.(map[string]any)
		renderMessage(w, i+1, msg)
	}
	renderTools(w, req)
}

func renderMessage(w io.Writer, n int, msg map[string]any) {
	prefix := fmt.Sprintf("  [%d] %v", n, msg["role"])
	if n == 0 {
		prefix = fmt.Sprintf("  %v (model %v)", msg["role"], msg["model"])
	}
	fmt.Fprintln(w, prefix+":")
	for _, b := range contentBlocks(msg["content"]) {
		fmt.Fprintln(w, indent(renderBlock(b), "      "))
	}
}

// renderBlock shows a content block readably: text as text, media as type
// and size (never the bytes), tool calls and results with their ids.
func renderBlock(b map[string]any) string {
	switch b["type"] {
	case "text":
		return printable(fmt.Sprint(b["text"]))
	case "image", "audio":
		return fmt.Sprintf("[%v %v, %d bytes]", b["type"], printable(fmt.Sprint(b["mimeType"])), decodedSize(b["data"]))
	case "tool_use":
		input, _ := json.Marshal(b["input"])
		return printable(fmt.Sprintf("[tool_use %v id=%v] input: %s", b["name"], b["id"], input))
	case "tool_result":
		var parts []string
		for _, nb := range contentBlocks(b["content"]) {
			parts = append(parts, renderBlock(nb))
		}
		return fmt.Sprintf("[tool_result for %v%s]\n%s", b["toolUseId"], errorMark(b), indent(strings.Join(parts, "\n"), "  "))
	}
	raw, _ := json.Marshal(b)
	return fmt.Sprintf("[%v] %s", b["type"], raw)
}

// decodedSize is the size of base64 media in bytes, exact when it decodes.
func decodedSize(data any) int {
	s, _ := data.(string)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return len(b)
	}
	return base64.StdEncoding.DecodedLen(len(s))
}

func errorMark(b map[string]any) string {
	if e, _ := b["isError"].(bool); e {
		return ", error"
	}
	return ""
}

func renderTools(w io.Writer, req map[string]any) {
	tools, _ := req["tools"].([]any)
	if len(tools) == 0 {
		fmt.Fprintln(w, "\nTools offered: none")
		return
	}
	choice := "auto (default)"
	if tc, ok := req["toolChoice"].(map[string]any); ok && tc["mode"] != nil {
		choice = fmt.Sprint(tc["mode"])
	}
	fmt.Fprintf(w, "\nTools offered (%d), tool choice %s:\n", len(tools), printable(choice))
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		fmt.Fprintf(w, "  - %s: %s\n", printable(fmt.Sprint(tm["name"])), printable(fmt.Sprint(orNone(tm["description"]))))
	}
}

func contentBlocks(c any) []map[string]any {
	switch v := c.(type) {
	case map[string]any:
		return []map[string]any{v}
	case []any:
		var out []map[string]any
		for _, b := range v {
			if m, ok := b.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func decodeObject(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

func orNone(v any) any {
	if v == nil || v == "" {
		return "none"
	}
	return v
}

func indent(s, pad string) string {
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

func shellQuote(s string) string {
	if strings.ContainsAny(s, " '\"$`\\") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// printable makes untrusted text safe for the operator's terminal: control
// characters (escape sequences that could repaint or hide lines) and
// invisible format characters (bidi overrides, zero-width spaces) are
// shown as \u escapes instead of being obeyed.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
