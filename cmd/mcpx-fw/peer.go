package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// peerCommand runs the built-in test upstream over stdio. The demo starts
// it as its upstream server, so the demo needs nothing installed.
func peerCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "peer-upstream",
		Short:  "Serve the built-in sampling test upstream over stdio (used by the demo)",
		Hidden: true,
		Args:   args(0, "mcpx-fw peer-upstream"),
		RunE: func(c *cobra.Command, _ []string) error {
			return peer.RunUpstream(c.Context(), os.Stdin, os.Stdout)
		},
	}
}
