package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/console"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// consoleActions is the console's view of the firewall: the operator's
// runtime (the same config, store and policies as the review commands),
// deciding through the same rules (review_rules.go).
type consoleActions struct {
	rt *runtime
}

var _ console.Actions = consoleActions{}

func (a consoleActions) Changed() <-chan struct{} { return a.rt.store.Changed() }

func (a consoleActions) Queue(ctx context.Context) ([]console.Summary, error) {
	items, err := a.rt.store.List(ctx, review.Filter{})
	if err != nil {
		return nil, err
	}
	out := make([]console.Summary, len(items))
	for i, it := range items {
		out[i] = consoleSummary(it)
	}
	return out, nil
}

// consoleSummary is the queue row of it; the console renders every
// string through inert.
func consoleSummary(it review.Item) console.Summary {
	return console.Summary{ID: it.ID, Server: it.Server, Label: it.Label, Kind: string(render.ItemKind(it)), Stage: it.Stage,
		State: string(it.State), Reasons: rawReasons(it.Reasons), ExpiresAt: it.ExpiresAt}
}

// rawReasons are the reasons as "[code] message", as the policy wrote
// them: the page makes them inert (doing it here too would double every
// backslash the page shows).
func rawReasons(rs []review.Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = "[" + r.Code + "] " + r.Message
	}
	return out
}

func (a consoleActions) Review(ctx context.Context, id string) (console.Review, error) {
	it, err := getItem(ctx, a.rt, id)
	if err != nil {
		return console.Review{}, err
	}
	var show bytes.Buffer
	render.Show(&show, it, render.ShowOptions{Now: time.Now(), Full: true, Layout: render.Layout{Width: consoleWidth},
		Progress: a.rt.cfg.Review.ProgressInterval})
	rv := console.Review{Summary: consoleSummary(it), DecisionID: it.DecisionID, Waived: rawReasons(it.Waived), Show: consoleShow(show.String()),
		Revision: a.rt.engine.Revision(), Decided: approvalOf(it)}
	rv.Doc, rv.DocNote = consoleDoc(it)
	if err := a.approvable(ctx, it); err != nil {
		rv.Refusal = err.Error()
	} else {
		rv.Approvable = true
	}
	rv.Answerable = answerable(a.rt, it) == nil
	return rv, nil
}

// consoleWidth is the width show's rows are cut for on the page: the
// page wraps long rows itself, so this only keeps show from folding them.
const consoleWidth = 160

// consoleShow is show's output without the commands to act (the page has
// buttons) and with its gutters as they are.
func consoleShow(s string) string {
	if i := strings.Index(s, "\nTo decide (if nobody does by"); i >= 0 {
		return s[:i+1]
	}
	return s
}

// approvalOf says who decided the item, and how, once it is decided.
func approvalOf(it review.Item) string {
	if it.State == review.StatePending {
		return ""
	}
	if it.DecidedBy == "" {
		return it.Note
	}
	return fmt.Sprintf("by %s at %s", it.DecidedBy, it.DecidedAt.Local().Format(time.DateTime))
}

// consoleDoc is the edit document for the item, or why there is none.
func consoleDoc(it review.Item) (doc, note string) {
	if it.State != review.StatePending {
		return "", ""
	}
	if err := render.EditRefusal(it); err != nil {
		return "", err.Error()
	}
	b, err := render.EditDoc(it, render.Editable(it))
	if err != nil {
		return "", "the item cannot be shown as a document: " + err.Error()
	}
	return string(b), ""
}

// approvable is the CLI's approvable, then the policy run again on the
// item as it is: a blocker gets no approve button.
func (a consoleActions) approvable(ctx context.Context, it review.Item) error {
	if err := approvable(it); err != nil {
		return err
	}
	return recheck(ctx, a.rt, it, nil)
}

func (a consoleActions) Approve(ctx context.Context, id, doc, note string) error {
	it, err := getItem(ctx, a.rt, id)
	if err != nil {
		return err
	}
	if err := approvable(it); err != nil {
		return err
	}
	e, err := consoleEdit(it, doc)
	if err != nil {
		return err
	}
	_, err = approveChecked(ctx, a.rt, it, e, note)
	return err
}

// consoleEdit is the edit a document from the page makes, as editItem
// reads one from the editor: nil when it is empty of changes (or "", a
// plain approval), refused with the reason when it is invalid.
func consoleEdit(it review.Item, doc string) (*review.Edit, error) {
	if doc == "" {
		return nil, nil
	}
	if err := render.EditRefusal(it); err != nil {
		return nil, err
	}
	original := render.Editable(it)
	want, err := render.EditDoc(it, original)
	if err != nil {
		return nil, err
	}
	buf := []byte(strings.ReplaceAll(doc, "\r\n", "\n")) // a form posts CRLF line ends
	if bytes.Equal(bytes.TrimSpace(buf), bytes.TrimSpace(want)) {
		return nil, nil
	}
	value, err := render.ApplyEdit(it, original, buf)
	if err != nil {
		return nil, fmt.Errorf("%s: the edit is refused: %w; the review is still pending", it.ID, err)
	}
	if render.EqualJSON(value, original) {
		return nil, nil
	}
	return editDiff(it, original, value)
}

func (a consoleActions) Reject(ctx context.Context, id, reason string) error {
	_, err := rejectItem(ctx, a.rt, id, reason)
	return err
}

func (a consoleActions) Answer(ctx context.Context, id, text, note string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("write the completion first")
	}
	_, err := answerItem(ctx, a.rt, id, completionJSON(text, defaultAnswerModel), note)
	return err
}

func (a consoleActions) Audit(ctx context.Context) (console.Audit, error) {
	entries, err := a.rt.store.Audit(ctx, review.AuditFilter{})
	if err != nil {
		return console.Audit{}, err
	}
	out := console.Audit{Revision: a.rt.engine.Revision()}
	for _, e := range entries {
		out.Entries = append(out.Entries, console.AuditEntry{Seq: e.Seq, At: e.At, Event: string(e.Event), Item: e.ItemID,
			Server: e.Server, Stage: e.Stage, Operator: e.Operator, Outcome: string(e.Outcome), Decision: e.DecisionID, Policy: short(e.PolicyRevision)})
	}
	var verdict bytes.Buffer
	err = verifyAudit(ctx, &verdict, a.rt.store)
	out.Intact = err == nil
	out.Verified = strings.TrimSpace(verdict.String())
	if err != nil {
		out.Verified = err.Error()
	}
	return out, nil
}

// Cost is what the review page shows beside the approve button: the
// request's estimated tokens (what the model reads, by the engine's one
// estimate, input.facts.estimated_tokens) and maxTokens, and the server's
// use in each configured window against its budget.
func (a consoleActions) Cost(ctx context.Context, id string) (console.Cost, error) {
	it, err := getItem(ctx, a.rt, id)
	if err != nil {
		return console.Cost{}, err
	}
	ic, err := costOf(ctx, a.rt, it)
	if err != nil {
		return console.Cost{}, err
	}
	c := console.Cost{EstimatedTokens: ic.EstimatedTokens, MaxTokens: ic.MaxTokens}
	for _, w := range ic.Windows {
		c.Windows = append(c.Windows, console.Window{Name: w.Name, Requests: w.Requests, Tokens: w.Tokens,
			BudgetRequests: w.BudgetRequests, BudgetTokens: w.BudgetTokens})
	}
	return c, nil
}
