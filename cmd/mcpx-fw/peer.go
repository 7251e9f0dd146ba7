package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// peerCommand runs the built-in test upstream over stdio. The demo starts
// it as its upstream server, so the demo needs nothing installed.
func peerCommand() *cobra.Command {
	var opts peer.UpstreamOptions
	cmd := &cobra.Command{
		Use:    "peer-upstream",
		Short:  "Serve the built-in sampling test upstream over stdio (used by the demo)",
		Hidden: true,
		Args:   args(0, "mcpx-fw peer-upstream"),
		RunE: func(c *cobra.Command, _ []string) error {
			return peer.RunUpstreamWith(c.Context(), os.Stdin, os.Stdout, opts)
		},
	}
	// Things of its own to own, for tests with several upstreams.
	cmd.Flags().StringVar(&opts.Name, "name", "", "mark reads and completions with this name, and offer completions")
	cmd.Flags().StringArrayVar(&opts.Resources, "resource", nil, "list this resource URI (repeatable)")
	cmd.Flags().StringArrayVar(&opts.Templates, "template", nil, "list this resource template (repeatable)")
	cmd.Flags().BoolVar(&opts.Record, "record", false, "record every message received, for the received tool")
	return cmd
}
