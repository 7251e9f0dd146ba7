package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/relay/demopeer"
)

// demoUpstreamCommand runs the demo's upstream over stdio: the demo's
// config starts it (this same binary) as its one server, so the demo
// needs nothing installed. It asks for sampling and elicitation and
// nothing else (package demopeer).
func demoUpstreamCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "demo-upstream",
		Short:  "Serve the demo's upstream over stdio (mcpx-fw demo starts it)",
		Hidden: true,
		Args:   args(0, "mcpx-fw demo-upstream"),
		RunE: func(c *cobra.Command, _ []string) error {
			return demopeer.RunUpstream(c.Context(), os.Stdin, os.Stdout)
		},
	}
}
