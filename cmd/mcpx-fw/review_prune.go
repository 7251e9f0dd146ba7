package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// pruneInterval is how often serve applies review.retain.
const pruneInterval = time.Hour

func reviewPruneCommand() *cobra.Command {
	var retain time.Duration
	c := &cobra.Command{
		Use:   "prune",
		Short: "Erase the prompt and completion text of reviews finished longer ago than review.retain",
		Long: `prune erases the prompt and completion text (and any edit, diff or written
answer) of every review that finished longer ago than review.retain (default
168h, 7 days), and removes the edit documents the review CLI wrote before
then (<state_dir>/edits). Ids, states, reasons, operators and times stay; the audit log
keeps digests of the erased text, so 'mcpx-fw audit --verify' still passes.
It also deletes the policy inputs kept for 'mcpx-fw policy replay' longer
than replay.keep (all of them when it is 0), then the oldest of the server
whose inputs take the most until the rest fit replay.max_bytes. serve does
the same every hour; this does it now.`,
		Args: args(0, "mcpx-fw review prune [--retain 24h]"),
		RunE: func(c *cobra.Command, _ []string) error {
			return withStore(c, func(ctx context.Context, rt *runtime) error {
				if !c.Flags().Changed("retain") {
					retain = rt.cfg.Review.Retain
				}
				if retain <= 0 {
					// The inputs kept for replay have a retention of their own.
					if _, err := rt.store.Prune(ctx, 0); err != nil {
						return err
					}
					fmt.Fprintf(c.OutOrStdout(), "review.retain is 0: no review's text is erased; %s\n", inputsPruned(rt.cfg.Replay.Keep))
					return nil
				}
				n, err := rt.store.Prune(ctx, retain)
				if err != nil {
					return err
				}
				edits, err := pruneEdits(rt.cfg.StateDir, retain)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "erased the text of %d review(s) finished more than %s ago, and %d edit document(s) written before then; %s\n", n, retain, edits, inputsPruned(rt.cfg.Replay.Keep))
				return nil
			})
		},
	}
	c.Flags().DurationVar(&retain, "retain", 0, "erase text of reviews finished longer ago than this (default: review.retain)")
	return c
}

// inputsPruned says which policy inputs kept for replay a prune deleted:
// they have a retention of their own, replay.keep.
func inputsPruned(keep time.Duration) string {
	if keep <= 0 {
		return "every policy input kept for replay is deleted (replay.keep is 0)"
	}
	return fmt.Sprintf("policy inputs kept for replay longer than %s (replay.keep) are deleted", keep)
}

// startPruning applies review.retain now, before serve takes requests, and
// then every pruneInterval while it runs, so erasure never depends on an
// operator remembering to. The returned func stops it and waits, so the
// store is not closed under it.
func startPruning(ctx context.Context, rt *runtime) (stop func()) {
	prune(ctx, rt)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(pruneInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				prune(ctx, rt)
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// prune erases what review.retain says is due, in the queue and in the
// edit folder; a failure is logged and retried at the next tick, never
// fatal to serving.
func prune(ctx context.Context, rt *runtime) {
	n, err := rt.store.Prune(ctx, rt.cfg.Review.Retain)
	switch {
	case err != nil && ctx.Err() == nil:
		rt.log.Warn("prune reviews", zap.Error(err))
	case n > 0:
		rt.log.Info("pruned reviews", zap.Int("items", n))
	}
	edits, err := pruneEdits(rt.cfg.StateDir, rt.cfg.Review.Retain)
	switch {
	case err != nil:
		rt.log.Warn("prune edit documents", zap.Error(err))
	case edits > 0:
		rt.log.Info("pruned edit documents", zap.Int("files", edits))
	}
}
