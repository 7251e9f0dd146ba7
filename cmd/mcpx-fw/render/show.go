package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// ShowOptions are what show needs besides the item: the time (for the
// time left), the commands to act, whether to fold long values, the
// command that shows them whole, the layout its rows are cut for, the
// item's cost (nil: not shown), and review.progress_interval as the
// command's config sets it (0: off, or not known).
type ShowOptions struct {
	Now      time.Time
	Actions  []Action
	Full     bool
	FullCmd  string
	Layout   Layout
	Cost     *Cost
	Progress time.Duration
}

// Show prints everything a person needs to decide: who asks (the
// configured name and label, not what the server claims), why it was
// escalated and which baseline reasons the server's policy waived, the whole request as the host's model gets it (and at stage
// two the completion beside it), what an operator changed or wrote, what
// it may cost against the server's budget, and the exact commands to act.
// Every string from the item goes through inert; upstream prose is laid
// out behind the gutter mark; every line but the commands is cut into rows
// of the screen, so the terminal never wraps one holding upstream text
// itself.
func Show(out io.Writer, it review.Item, o ShowOptions) {
	w := o.Layout.Rows(out)
	defer w.Flush()
	renderHeader(w, it, o.Now)
	if it.State == review.StatePending {
		renderHostWait(w, o.Progress)
	}
	fmt.Fprintln(w, "\nWhy it needs review:")
	writeLines(w, "  - ", reasonLines(it.Reasons))
	writeLines(w, "  waived by the server's policy: ", reasonLines(it.Waived))
	if !it.ErasedAt.IsZero() {
		fmt.Fprintf(w, "\nThe prompt and completion text were erased at %s (review.retain);\nmcpx-fw audit keeps their digests.\n",
			it.ErasedAt.Format(time.RFC3339))
		return
	}
	v := &view{full: o.Full}
	renderRequest(w, v, it)
	renderCompletion(w, v, it)
	renderOperatorWork(w, v, it)
	if v.folded > 0 {
		fmt.Fprintf(w, "\n%d long value(s) above are folded, each saying how much it hides; to see everything:\n", v.folded)
		_ = w.whole("  " + o.FullCmd + "\n")
	}
	if o.Cost != nil {
		renderCost(w, it, *o.Cost)
	}
	if it.State == review.StatePending {
		renderActions(w, it, o.Actions)
	}
}

// serverWords names the server by its config name and, when the config
// gives it another, its label.
func serverWords(it review.Item) string {
	if it.Label == "" || it.Label == it.Server {
		return inert.Line(it.Server)
	}
	return inert.Line(it.Server) + " — " + inert.Line(it.Label)
}

// renderHeader is who asks, at which stage, since and until when, and
// who decided.
func renderHeader(w io.Writer, it review.Item, now time.Time) {
	fmt.Fprintf(w, "Review %s  (decision %s)\n", inert.Word(it.ID), inert.Word(it.DecisionID))
	fmt.Fprintf(w, "Server:   %s\n", serverWords(it))
	if ItemKind(it) != engine.KindSampling {
		fmt.Fprintf(w, "Kind:     %s\n", kindWords(it))
	}
	fmt.Fprintf(w, "Stage:    %s   Protocol: %s   State: %s\n", stageWords(it), inert.Word(it.Era), inert.Word(string(it.State)))
	if it.Parent != "" {
		fmt.Fprintf(w, "Follows:  review %s, which let the request through\n", inert.Word(it.Parent))
	}
	fmt.Fprintf(w, "Created:  %s   Expires: %s", it.CreatedAt.Format(time.RFC3339), it.ExpiresAt.Format(time.RFC3339))
	if it.State == review.StatePending {
		fmt.Fprintf(w, " (%s left)", left(it, now))
	}
	fmt.Fprintln(w)
	renderDecided(w, it)
}

// renderHostWait says what else bounds a pending review: the request
// timeout of the host whose call waits on it, which no setting of serve's
// lengthens, and the progress serve sends that call, which keeps waiting a
// host that resets its timeout on progress.
func renderHostWait(w io.Writer, every time.Duration) {
	fmt.Fprintln(w, "Host:     the host's own request timeout can end this review first (abandoned)")
	if every > 0 {
		fmt.Fprintf(w, "          serve sends the waiting call progress every %s if the host asked for progress\n", every)
	}
}

// reasonLines are the reasons as "[code] message", the message one line
// (a policy may quote request text in it).
func reasonLines(rs []review.Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("[%s] %s", inert.Word(r.Code), inert.Line(r.Message))
	}
	return out
}

// stageWords says what is held at each stage.
func stageWords(it review.Item) string {
	if it.Stage == review.StageResult {
		return "result (" + heldWords(it) + ")"
	}
	return "request (" + heldWords(it) + ")"
}

// kindWords say what the upstream asks of the host, and for elicitation
// in which mode.
func kindWords(it review.Item) string {
	switch k := ItemKind(it); k {
	case engine.KindElicitation:
		switch mode := validate.ElicitationMode(decodeObject(it.Request)); mode {
		case "form":
			return "elicitation, form mode: the upstream asks the user to fill in a form"
		case "url":
			return "elicitation, url mode: the upstream sends the user to a web page"
		default:
			return "elicitation, mode " + inert.Word(mode)
		}
	case engine.KindRoots:
		return "roots: the upstream asks which folders and files the host shares"
	default:
		return inert.Word(string(k))
	}
}

// renderRequest lays out the request by its kind; a kind this build does
// not know is shown member by member.
func renderRequest(w io.Writer, v *view, it review.Item) {
	switch ItemKind(it) {
	case engine.KindSampling:
		samplingView{v}.request(w, decodeObject(it.Request))
	case engine.KindElicitation:
		elicitView{v}.elicitation(w, it.Request)
	case engine.KindRoots:
		rootsView{v}.rootsRequest(w, decodeObject(it.Request))
	default:
		fmt.Fprintln(w, "\nRequest:")
		writeLines(w, "  ", v.members(decodeObject(it.Request), nil))
	}
}

func renderDecided(w io.Writer, it review.Item) {
	switch {
	case it.DecidedBy != "":
		fmt.Fprintf(w, "Decided:  %s by %s at %s", approvalWords(it), inert.Line(it.DecidedBy), it.DecidedAt.Format(time.RFC3339))
	case !it.DecidedAt.IsZero():
		fmt.Fprintf(w, "Closed:   %s at %s", inert.Word(string(it.State)), it.DecidedAt.Format(time.RFC3339))
	default:
		return
	}
	if it.Note != "" {
		fmt.Fprintf(w, " — %s", inert.Line(it.Note))
	}
	fmt.Fprintln(w)
	if !it.FinishedAt.IsZero() {
		fmt.Fprintf(w, "Finished: %s at %s — %s\n", inert.Word(string(it.State)), it.FinishedAt.Format(time.RFC3339), inert.Line(it.FinishNote))
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
func renderCompletion(w io.Writer, v *view, it review.Item) {
	if len(it.Result) == 0 {
		return
	}
	held := ""
	if it.State == review.StatePending {
		held = " (held: the upstream gets it only if you approve)"
	}
	switch ItemKind(it) {
	case engine.KindSampling:
	case engine.KindElicitation:
		fmt.Fprintf(w, "\nAnswer%s:\n", held)
		elicitView{v}.elicitAnswer(w, it.Request, decodeObject(it.Result))
		return
	case engine.KindRoots:
		rootsView{v}.roots(w, it, decodeObject(it.Result))
		return
	default:
		fmt.Fprintf(w, "\nResult%s:\n", held)
		writeLines(w, "  ", v.members(decodeObject(it.Result), nil))
		return
	}
	if it.State == review.StatePending {
		fmt.Fprintln(w, "\nCompletion (held: the upstream gets it only if you approve):")
	} else {
		fmt.Fprintln(w, "\nCompletion:")
	}
	samplingView{v}.completion(w, decodeObject(it.Result))
}

// renderOperatorWork shows what the approver changed, or the completion
// they wrote. The edit's diff quotes the request's text, so its lines are
// shown behind the gutter like any other prose an upstream wrote.
func renderOperatorWork(w io.Writer, v *view, it review.Item) {
	if it.EditDiff != "" {
		fmt.Fprintf(w, "\nEdited by %s before approval (- original, + approved):\n", inert.Line(it.DecidedBy))
		writeLines(w, "  ", gutter(strings.TrimSuffix(it.EditDiff, "\n")))
	}
	if len(it.Answer) > 0 {
		fmt.Fprintf(w, "\nAnswer written by %s:\n", inert.Line(it.DecidedBy))
		samplingView{v}.completion(w, decodeObject(it.Answer))
	}
}
