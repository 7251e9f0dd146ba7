// Command upstream is the project's test upstream server: over stdio, its
// `sample` tool pushes whatever sampling/createMessage params it is given,
// so tests can send every bad shape through the firewall. It is the same
// peer `mcpx-fw peer-upstream` runs for the demo.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

func main() {
	if err := peer.RunUpstream(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
}
