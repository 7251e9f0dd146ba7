package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func checkCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Run serve's start-up path (config, state dir, policies, commands) and stop",
		Long: `check loads the config exactly as serve does, opens the state dir, compiles
the policies and looks up every upstream command, then stops. It exits 0 when
serve would start, and prints the first problem otherwise.`,
		Args: args(0, "mcpx-fw check --config FILE"),
		RunE: func(c *cobra.Command, _ []string) error {
			rt, err := startServing(c.Context(), configFlag(c))
			if err != nil {
				return err
			}
			defer rt.close()
			fmt.Fprintf(c.OutOrStdout(), "ok: %d server(s), policy revision %s, state dir %s\n",
				len(rt.cfg.Servers), rt.engine.Revision(), rt.cfg.StateDir)
			return nil
		},
	}
}
