package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func storeCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "store",
		Short: "The review store's database (the SQLite file in state_dir, or store.url)",
	}
	c.AddCommand(storeMigrateCommand())
	return c
}

func storeMigrateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Bring the review store's schema up to date and print its version",
		Long: `migrate opens the review store the config names (store.url, or else the
SQLite file in state_dir), applies every migration it lacks, in one
transaction under the store's write lock, and prints the store and its
schema version. serve and the CLI migrate the same way when they open the
store; run this to do it ahead of a rollout, or to see where a database is.
A store whose schema is newer than this mcpx-fw is refused, never changed.`,
		Args: args(0, "mcpx-fw store migrate --config FILE"),
		RunE: func(c *cobra.Command, _ []string) error {
			return withRuntime(c, startOperator, func(ctx context.Context, rt *runtime) error { // creates a store that is not there
				v, err := rt.store.SchemaVersion(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "store: %s %s, schema version %d\n", rt.store.Backend(), rt.store.Path(), v)
				return nil
			})
		},
	}
}
