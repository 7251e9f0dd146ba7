package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
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
			scr, err := layoutFor(c)
			if err != nil {
				return err
			}
			return withQueue(c, noConfigNote, func(ctx context.Context, rt *runtime) error {
				printed := 0
				err := rt.store.Watch(ctx, review.Filter{Server: server}, func(it review.Item) error {
					acts := render.Actions(it, configFlag(c), rt.cfg.Servers[it.Server].OperatorAnswer)
					show := render.ReviewCommand("show", it, configFlag(c), "")
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
	render.ItemJSON
	Commands map[string]string `json:"commands"`
}

// printArrival prints one new item: a JSON line, or the block
// render.Arrival lays out for the layout l.
func printArrival(out io.Writer, l render.Layout, it review.Item, show string, acts []render.Action, asJSON bool) error {
	if !asJSON {
		return render.Arrival(out, l, it, show, acts)
	}
	j := arrivalJSON{ItemJSON: render.Summary(it), Commands: map[string]string{"show": show}}
	j.DecisionID, j.Label, j.Parent = it.DecisionID, it.Label, it.Parent
	for _, a := range acts {
		j.Commands[a.Name] = a.Command
	}
	return writeJSONLine(out, j)
}
