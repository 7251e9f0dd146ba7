package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// approveOptions are approve's flags.
type approveOptions struct {
	note     string
	edit     bool   // open the editor first
	editFile string // or read the edited document from this file
}

func reviewApproveCommand() *cobra.Command {
	var o approveOptions
	c := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve a pending review, as it is or edited; the policy runs again and a deny still wins",
		Long: `approve lets a held request go to the host's model, or a held completion go
back to the upstream. The policy runs again with the approval: a deny still
wins, and a blocker can never be approved.

--edit opens $VISUAL or $EDITOR (vi when neither is set) on a YAML rendering of
the request (system prompt, message text, maxTokens, stop sequences) or of the
completion's text. Tool calls, tool results and media are shown but guarded.
The edit is validated and decided again (input.approval.edited is true); an
invalid or denied edit is refused with the reason and the review stays
pending, and an edit made in the editor is kept in its file, named in the
refusal. The document is written in the state dir's edits folder (0700,
out of every isolated upstream's reach), never in $TMPDIR, and read back
only as the regular file the editor saved there. For an elicitation, the
message and each field's title, description and choice titles may change,
never the form's shape (names, types, constraints, required, defaults,
choice values) nor a URL; roots and a user's answer are approved as they
are. Saving it unchanged approves the original, and says so. --edit-file
FILE does the same with a document written beforehand (mcpx-fw review
show ID --edit-doc prints the one the editor would open); a kept edit
given back this way is removed once approved.`,
		Args: args(1, "mcpx-fw review approve rv-… [--edit | --edit-file FILE] [--note T]"),
		RunE: func(c *cobra.Command, a []string) error {
			if o.edit && o.editFile != "" {
				return usageError{fmt.Errorf("--edit and --edit-file are alternatives\nTry: mcpx-fw review approve %s --edit", a[0])}
			}
			return withStore(c, func(ctx context.Context, rt *runtime) error {
				return approve(ctx, c, rt, a[0], o)
			})
		},
	}
	c.Flags().StringVar(&o.note, "note", "", "a note kept with the decision")
	c.Flags().BoolVar(&o.edit, "edit", false, "edit the request (or completion) in $VISUAL/$EDITOR before approving")
	c.Flags().StringVar(&o.editFile, "edit-file", "", "approve the edited document in this file (- for stdin)")
	return c
}

func approve(ctx context.Context, c *cobra.Command, rt *runtime, id string, o approveOptions) error {
	it, err := getItem(ctx, rt, id)
	if err != nil {
		return err
	}
	if err := approvable(it); err != nil {
		return err
	}
	var e *review.Edit
	var kept string
	if o.edit || o.editFile != "" {
		if e, kept, err = editItem(c, rt.cfg.StateDir, it, o.editFile); err != nil {
			return err
		}
	}
	if it, err = approveChecked(ctx, rt, it, e, o.note); err != nil {
		return keepEdit(err, it, kept)
	}
	if kept != "" {
		os.Remove(kept)
	}
	fmt.Fprintf(c.OutOrStdout(), "%s (decision %s); %s\n", approvedWords(it.ID, e, o), it.DecisionID, nextStep(it))
	return nil
}

// approvedWords say what was approved: the operator's edit, or, when an
// edit was asked for and the document came back with no change, the item
// as it was, saying so.
func approvedWords(id string, e *review.Edit, o approveOptions) string {
	switch {
	case e != nil:
		return "approved with your edit " + id
	case o.edit || o.editFile != "":
		return "approved " + id + " as it was: the edit document came back unchanged"
	}
	return "approved " + id
}

// nextStep says what serve does with an approved item, in the words of its
// kind: a model answers a prompt, the user an elicitation, the host a roots
// request.
func nextStep(it review.Item) string {
	who, what := answerWords(render.ItemKind(it))
	if it.Stage == review.StageResult {
		return "serve checks " + what + " once more and returns it to the upstream"
	}
	return "serve checks the request once more and " + who + " answers it"
}

// answerWords name who answers a request of the kind, and what they
// answer it with.
func answerWords(kind engine.Kind) (who, what string) {
	switch kind {
	case engine.KindElicitation:
		return "the user", "the user's answer"
	case engine.KindRoots:
		return "the host", "the roots list"
	}
	return "the host's model", "the completion"
}

// approvable refuses what no approval could release: an item already
// decided, or a request that no host can answer (it needs an answer).
func approvable(it review.Item) error {
	if it.State != review.StatePending {
		return withCode(exitFailure, &review.DecidedError{Item: it})
	}
	switch {
	case it.Stage != review.StageRequest || render.HostOffers(it):
	case render.ItemKind(it) == engine.KindSampling:
		return withCode(exitFailure, fmt.Errorf("%s: the host cannot sample, so approving gets no answer; write one: mcpx-fw review answer %s --text \"…\"", it.ID, it.ID))
	default:
		return withCode(exitFailure, fmt.Errorf("%s: the host did not declare %s, so approving gets no answer; reject it: mcpx-fw review reject %s", it.ID, render.ItemKind(it), it.ID))
	}
	return nil
}

func reviewRejectCommand() *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "reject ID",
		Short: "Reject a pending review; the upstream hears no (-1, or decline for a form)",
		Long: `reject refuses a pending review; the reason stays in the queue and the
audit log, and is never sent. What the upstream gets is what a refusal by
a person is on the wire: for sampling and roots, error -1 (user
rejected); for an elicitation from an upstream before 2026-07-28, the
result {"action": "decline"} (a URL from an upstream's -32042 error fails
the host's call with -1 instead); for a request a 2026-07-28 upstream made
in its input requests, the host's call fails with -1 and the upstream is
not retried. It prints which, for the review it rejected.`,
		Args: args(1, `mcpx-fw review reject rv-… --reason "…"`),
		RunE: func(c *cobra.Command, a []string) error {
			return withStore(c, func(ctx context.Context, rt *runtime) error {
				it, err := rejectItem(ctx, rt, a[0], reason)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "rejected %s (decision %s); %s\n", it.ID, it.DecisionID, render.RejectEffect(it))
				return nil
			})
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why; kept with the decision (never sent to the upstream)")
	return c
}

// recheck runs the policy on a pending item as if approved, on the
// operator's edit when there is one, so the CLI refuses what serve would
// refuse anyway; serve re-decides again itself.
func recheck(ctx context.Context, rt *runtime, it review.Item, e *review.Edit) error {
	s, err := render.ItemRequest(it)
	if err != nil {
		return err
	}
	var result []byte
	if it.Stage == review.StageResult {
		result = it.Result
	}
	switch {
	case e != nil && it.Stage == review.StageResult:
		result = e.Value
	case e != nil:
		s.Params = e.Value
	}
	v := rt.engine.Reconsider(ctx, s, result, engine.Approval{DecisionID: it.DecisionID, By: operator(), At: time.Now(), Edited: e != nil})
	if e != nil {
		return refused(it, v, "the edit is refused")
	}
	return refused(it, v, "it cannot be approved")
}

// refused explains a re-decision that did not pass, in one line, with what
// to do next; nil when it passed.
func refused(it review.Item, v engine.Verdict, what string) error {
	switch v.Outcome {
	case engine.OutcomePass:
		return nil
	case engine.OutcomeBlocker:
		return withCode(exitFailure, fmt.Errorf("%s: %s: %s; %s", it.ID, what, blockerReasons(v), nextForBlocker(what)))
	}
	return withCode(exitFailure, fmt.Errorf("%s: %s: the policy could not decide (%v); see the logs and retry", it.ID, what, v.Err))
}

// nextForBlocker says what follows a refusal: an edit or answer can be
// tried again; the item as it is never can.
func nextForBlocker(what string) string {
	if what == "it cannot be approved" {
		return "it is a blocker and nobody may approve it — reject it or let it expire"
	}
	return "the review is still pending"
}

// blockerReasons lists what made a blocker, for the operator (who may see
// rule messages; the upstream never does), inertly: a violation's path
// spells the upstream's member names.
func blockerReasons(v engine.Verdict) string {
	var parts []string
	for _, vi := range v.Violations {
		parts = append(parts, fmt.Sprintf("[%s] %s: %s", inert.Word(vi.Rule), inert.Line(vi.Path), inert.Line(vi.Message)))
	}
	for _, r := range v.Reasons {
		parts = append(parts, fmt.Sprintf("[%s] %s", inert.Word(r.Code), inert.Line(r.Message)))
	}
	return strings.Join(parts, "; ")
}
