package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// errWatchDone ends a watch that has printed the items asked for.
var errWatchDone = errors.New("watch done")

func reviewWatchCommand() *cobra.Command {
	var asJSON bool
	var server string
	var count int
	c := &cobra.Command{
		Use:   "watch",
		Short: "Print each review as it arrives, with the commands to act on it",
		Long: `watch prints every pending review once: those waiting when it starts, then each
new one as it arrives, from any serve process sharing the state dir. It runs
until interrupted (or, with --count N, until it has printed N). With --json it
prints one JSON object per line: the fields of review list --json plus
label, parent, decision_id and the commands to act.`,
		Args: args(0, "mcpx-fw review watch [--json] [--server NAME] [--count N]"),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c.SetContext(ctx)
			scr, err := screenFor(c)
			if err != nil {
				return err
			}
			return withStore(c, func(ctx context.Context, rt *runtime) error {
				printed := 0
				err := rt.store.Watch(ctx, review.Filter{Server: server}, func(it review.Item) error {
					acts := actionsFor(it, configFlag(c), rt.cfg.Servers[it.Server].OperatorAnswer)
					show := reviewCmd("show", it, configFlag(c), "")
					if err := printArrival(c.OutOrStdout(), scr, it, show, acts, asJSON); err != nil {
						return err
					}
					if printed++; count > 0 && printed >= count {
						return errWatchDone
					}
					return nil
				})
				if errors.Is(err, errWatchDone) {
					return nil
				}
				return err
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	c.Flags().StringVar(&server, "server", "", "only reviews from this server")
	c.Flags().IntVar(&count, "count", 0, "exit after this many reviews (0: run until interrupted)")
	addWidthFlag(c)
	return c
}

// arrivalJSON is one line of watch --json.
type arrivalJSON struct {
	itemJSON
	Commands map[string]string `json:"commands"`
}

// printArrival prints one new item: a JSON line, or a short block with
// the reasons and the commands, its rows cut for the screen s but for the
// commands, printed whole to be copied. Every string of the item goes
// through inert.
func printArrival(out io.Writer, s screen, it review.Item, show string, acts []action, asJSON bool) error {
	if asJSON {
		j := arrivalJSON{itemJSON: summary(it), Commands: map[string]string{"show": show}}
		j.DecisionID, j.Label, j.Parent = it.DecisionID, it.Label, it.Parent
		for _, a := range acts {
			j.Commands[a.Name] = a.Command
		}
		return writeJSONLine(out, j)
	}
	w := s.rows(out)
	fmt.Fprintf(w, "%s  %s (%s)  %s %s  expires %s\n", inert.Word(it.ID), inert.Line(it.Server), inert.Line(it.Label),
		inert.Word(string(itemKind(it))), inert.Word(it.Stage), it.ExpiresAt.Local().Format(time.TimeOnly))
	writeLines(w, fmt.Sprintf("  %-8s ", "why:"), reasonLines(it.Reasons))
	commands := fmt.Sprintf("  %-8s %s\n", "look:", show)
	for _, a := range acts {
		commands += fmt.Sprintf("  %-8s %s\n", a.Name+":", a.Command)
	}
	return w.whole(commands + "\n")
}
