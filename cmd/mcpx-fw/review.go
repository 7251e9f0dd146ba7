package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

func reviewCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "review",
		Short: "List, inspect, approve, edit, answer and reject escalated requests (sampling, elicitation, roots)",
		Long: `When a policy says a request an upstream makes of the host (sampling,
elicitation or roots), or the answer to one, needs a person, serve holds it in the review queue (in state_dir) until an operator
decides or review.timeout passes. These commands work from any shell with the
same config (--config, or MCPXFW_CONFIG when it is not given; or
MCPXFW_STATE_DIR), while serve waits; list, show and watch
need only the store (MCPXFW_STATE_DIR or MCPXFW_STORE_URL), no config file
and no policies.

  mcpx-fw review list                 what is waiting
  mcpx-fw review watch                each new review as it arrives
  mcpx-fw review show rv-…            the whole request, and the commands to act
  mcpx-fw review approve rv-…         let it through (--edit to change it first)
  mcpx-fw review answer rv-… --text "…"     write the completion yourself
  mcpx-fw review reject rv-… --reason "…"   the upstream hears no (-1, or decline for a form)
  mcpx-fw review prune                erase old prompt text now (serve does it hourly)

Approving runs the policy again with the approval: a deny still wins, and a
blocker (a structural violation or a policy deny) can never be approved. The
first decision stands; a second one is refused, naming who decided. Every
transition is in the audit log (mcpx-fw audit).

Exit codes: 0 done, 1 refused or failed, 2 usage, 3 not found.`,
	}
	c.AddCommand(reviewListCommand(), reviewShowCommand(), reviewApproveCommand(), reviewRejectCommand(),
		reviewAnswerCommand(), reviewWatchCommand(), reviewPruneCommand())
	return c
}

func reviewListCommand() *cobra.Command {
	var all, asJSON bool
	var server string
	c := &cobra.Command{
		Use:   "list",
		Short: "List pending reviews (--all for decided ones too)",
		Args:  args(0, "mcpx-fw review list [--all] [--server NAME] [--json]"),
		RunE: func(c *cobra.Command, _ []string) error {
			scr, err := tableLayoutFor(c)
			if err != nil {
				return err
			}
			return withQueue(c, noConfigNote, func(ctx context.Context, rt *runtime) error {
				items, err := rt.store.List(ctx, review.Filter{All: all, Server: server})
				if err != nil {
					return err
				}
				budgets, err := listBudgets(ctx, rt, items)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSONLines(c.OutOrStdout(), render.ListJSON(items, budgets))
				}
				w := scr.Rows(c.OutOrStdout())
				render.List(w, items, budgets, time.Now())
				return w.Flush()
			})
		},
	}
	c.Flags().BoolVar(&all, "all", false, "include decided, expired and abandoned items")
	c.Flags().StringVar(&server, "server", "", "only items from this server")
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	addTableWidthFlag(c)
	return c
}

func reviewShowCommand() *cobra.Command {
	var asJSON, asDoc, full bool
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Show one review: the server, the whole request, the reasons, time left, how to act",
		Long: `show prints everything the host's model will get: the settings (maxTokens,
temperature, stop sequences, model preferences, metadata), the system prompt,
every message block by block (tool calls with their input, tool results with
their content and structured content, resources, media as type and size), and
every tool offered with its description, schemas and annotations; at stage
two, the completion in full. For an elicitation it shows the mode, the
message and every field of the form (name, type, constraints, required,
default, title, description, the choices with their titles), or for URL
mode the whole URL on a line of its own, then its scheme, host, port, path
and query, an international host both as Unicode and as xn-- ASCII, and a
warning for http, a user name before @, a punycode host or one that mixes
scripts; at stage two, the user's answer against each field. For roots, the
list the upstream would get. Long strings and long lists of plain values are
folded, each fold saying how much it hides; --full shows them whole, and
--json prints the stored request itself.

A pending review also says that the host's own request timeout can end it
before review.timeout does (it is then abandoned), and, when
review.progress_interval is not 0, how often serve sends the waiting call
progress, which keeps a host that asked for progress and resets its timeout
on it waiting.

Text from the upstream is shown inertly: control characters, bidi controls,
zero-width and other invisible characters, invalid UTF-8 and combining marks
piled past three on a character appear as escapes (\x1b, \u202e, \xff,
\u0301), and a backslash it wrote as \\, so an escape on screen is always one
mcpx-fw wrote. Each line of its prose starts with │. A line too long for the
screen (the terminal's width, else 100 columns, or --width) goes on in rows
that start with ┆ under its indentation: the terminal never wraps a line
itself, so no text can reach the start of a row unmarked.`,
		Args: args(1, "mcpx-fw review show rv-… [--full | --json | --edit-doc]"),
		RunE: func(c *cobra.Command, a []string) error {
			scr, err := layoutFor(c)
			if err != nil {
				return err
			}
			return withQueue(c, noConfigNote, func(ctx context.Context, rt *runtime) error {
				it, err := getItem(ctx, rt, a[0])
				if err != nil {
					return err
				}
				if asDoc {
					return writeEditDoc(c.OutOrStdout(), it)
				}
				cost, err := costOf(ctx, rt, it)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), render.ShowJSON(it, cost))
				}
				answers := rt.cfg.Servers[it.Server].OperatorAnswer
				render.Show(c.OutOrStdout(), it, render.ShowOptions{Now: time.Now(), Actions: render.Actions(it, configFlag(c), answers),
					Full: full, FullCmd: render.ReviewCommand("show", it, configFlag(c), " --full"), Layout: scr, Cost: &cost,
					Progress: rt.cfg.Review.ProgressInterval})
				return nil
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	c.Flags().BoolVar(&asDoc, "edit-doc", false, "print the document approve --edit opens, to edit and pass to --edit-file")
	c.Flags().BoolVar(&full, "full", false, "fold nothing: show every string and list whole")
	c.MarkFlagsMutuallyExclusive("json", "edit-doc", "full")
	addWidthFlag(c)
	return c
}

// writeEditDoc prints the editable document of a pending item.
func writeEditDoc(w io.Writer, it review.Item) error {
	if it.State != review.StatePending {
		return withCode(exitFailure, &review.DecidedError{Item: it})
	}
	if err := render.EditRefusal(it); err != nil {
		return withCode(exitFailure, err)
	}
	doc, err := render.EditDoc(it, render.Editable(it))
	if err != nil {
		return err
	}
	_, err = w.Write(doc)
	return err
}

// withStore runs fn with the operator's runtime: the same config, state dir
// and policies as serve, but quiet logs and no decision log of its own. The
// store must exist (startDecider).
func withStore(c *cobra.Command, fn func(context.Context, *runtime) error) error {
	return withRuntime(c, startDecider, fn)
}

// withRuntime runs fn with the runtime start opens for c's config.
func withRuntime(c *cobra.Command, start func(context.Context, string) (*runtime, error), fn func(context.Context, *runtime) error) error {
	rt, err := start(c.Context(), configFlag(c))
	if err != nil {
		return err
	}
	defer rt.close()
	return fn(c.Context(), rt)
}

// withQueue runs fn with the runtime of a command that only reads the
// queue (startReader): no policy is compiled. Without a config file it
// says, on stderr, what it cannot know (note; "": nothing).
func withQueue(c *cobra.Command, note string, fn func(context.Context, *runtime) error) error {
	rt, err := startReader(c.Context(), configFlag(c))
	if err != nil {
		return err
	}
	defer rt.close()
	if rt.cfg.Path() == "" && note != "" {
		fmt.Fprintln(c.ErrOrStderr(), note)
	}
	return fn(c.Context(), rt)
}

// noConfigNote is what review list, show and watch say when they read no
// config file: the queue is all there, but servers' budgets and whether
// an operator may answer are in the config.
const noConfigNote = "note: no config file (--config, MCPXFW_CONFIG, or mcpx-fw.yaml here): budgets are not shown and operator answers are not offered"

// getItem finds a review by its id, or by the decision id that opened it.
// A decision that was a blocker is refused here: nobody may approve it.
func getItem(ctx context.Context, rt *runtime, id string) (review.Item, error) {
	if strings.HasPrefix(id, "dc-") {
		d, err := rt.store.Decision(ctx, id)
		if errors.Is(err, review.ErrNotFound) {
			return review.Item{}, withCode(exitNotFound, fmt.Errorf("no decision %s\nTry: mcpx-fw review list --all", id))
		}
		if err != nil {
			return review.Item{}, err
		}
		if d.ReviewID == "" {
			return review.Item{}, withCode(exitFailure, notReviewable(d))
		}
		id = d.ReviewID
	}
	it, err := rt.store.Get(ctx, id)
	if errors.Is(err, review.ErrNotFound) {
		return review.Item{}, withCode(exitNotFound, fmt.Errorf("no review %s\nTry: mcpx-fw review list --all", id))
	}
	return it, err
}

func notReviewable(d review.Decision) error {
	if d.Outcome == engine.OutcomeBlocker.String() {
		what := "request"
		if d.Stage == string(engine.StageResult) {
			what = "answer"
		}
		return fmt.Errorf("%s is a blocker (%s): nobody may approve it; the %s itself must change", d.ID, blockerWhy(d.Reasons), what)
	}
	return fmt.Errorf("%s was decided %q and has no review to act on", d.ID, d.Outcome)
}

// maxBlockerReasons is how many of a blocker's reasons its one line names.
const maxBlockerReasons = 3

// blockerWhy names a blocker's first reasons with their messages (a
// violation's names the field or member it is about, e.g. "/content/age:
// the value is above maximum 120"), inertly: a path spells the upstream's
// member names.
func blockerWhy(rs []review.Reason) string {
	parts := make([]string, 0, maxBlockerReasons+1)
	for i, r := range rs {
		if i == maxBlockerReasons {
			parts = append(parts, fmt.Sprintf("and %d more", len(rs)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %s", inert.Word(r.Code), inert.Line(r.Message)))
	}
	return strings.Join(parts, "; ")
}

func decideError(err error) error {
	var de *review.DecidedError
	if errors.As(err, &de) {
		return withCode(exitFailure, err)
	}
	return err
}

// operator is who made a decision: the OS user running the CLI.
func operator() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

// writeJSON prints v as indented JSON through inert.JSON: still JSON with
// the same value, with nothing in it a terminal would obey.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(inert.JSON(b.Bytes()))
	return err
}
