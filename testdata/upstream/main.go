// Command upstream is the project's test upstream server: over stdio, its
// `sample` tool pushes whatever sampling/createMessage params it is given,
// so tests can send every bad shape through the firewall. It is
// relay/peer's upstream, hostile and load modes included (the
// MCPXFW_PEER_* variables), which mcpx-fw itself never links: the
// end-to-end tests of cmd/mcpx-fw build it once, as mcpx-fw-test-upstream
// beside the mcpx-fw they build, and run it as their stdio servers.
//
// With -http ADDR it serves its sampling tools (sample, sample_raw,
// sample_standalone, sample_input, sample_input_raw, echo, client_info; see
// peer.ServeUpstreamHTTP) over
// streamable HTTP instead, and prints its URL (http://HOST:PORT/mcp) as the
// first line on stdout, so ADDR may use port 0. -require-header
// "Name: value" then refuses every request without that header, to show a
// configured header arrives.
//
// Over stdio, -name, -resource, -template and -record give it things of its
// own (see peer.UpstreamOptions), for tests with several upstreams.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on `ADDR` (such as 127.0.0.1:0) instead of stdio")
	require := flag.String("require-header", "", "with -http: refuse requests without this header (`Name: value`)")
	var opts peer.UpstreamOptions
	flag.StringVar(&opts.Name, "name", "", "mark reads and completions with `NAME`, and offer completions")
	flag.Func("resource", "list the resource `URI` (repeatable)", func(v string) error { opts.Resources = append(opts.Resources, v); return nil })
	flag.Func("template", "list the resource `TEMPLATE` (repeatable)", func(v string) error { opts.Templates = append(opts.Templates, v); return nil })
	flag.BoolVar(&opts.Record, "record", false, "record every message received, for the received tool")
	flag.Parse()
	if flag.NArg() > 0 { // it is no mcpx-fw: `upstream review approve ...` is refused, not served
		fmt.Fprintf(os.Stderr, "upstream: takes flags only, not %q\n", flag.Args())
		os.Exit(2)
	}
	var err error
	if *addr != "" {
		err = serveHTTP(*addr, *require)
	} else {
		err = peer.RunUpstreamWith(context.Background(), os.Stdin, os.Stdout, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
}

func serveHTTP(addr, require string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	return peer.ServeUpstreamHTTP(ctx, ln, peer.HTTPOptions{RequireHeader: require})
}
