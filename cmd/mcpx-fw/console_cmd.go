package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/console"
)

func consoleCommand() *cobra.Command {
	var addr string
	c := &cobra.Command{
		Use:   "console",
		Short: "Serve the review console: read and decide the review queue in a browser",
		Long: `console serves a local web page over the same store, config and policies as
the review commands: the queue (live: new reviews appear as they arrive),
each review with the server's label, the reasons, the system prompt and every
message in one box that is both the reading view and the editor, the tools
offered with their schemas, maxTokens, the estimated tokens and the server's
usage and budget beside the approve button, the time left; and the audit log
with its verification. Approve, approve with edits, reject with a reason and
(where operator_answer is set) answer run the same rules as mcpx-fw review:
the policy decides again, a blocker has no approve button, and every decision
is in the audit log under your user name.

It prints a sign-in link to stderr. The link works once: opening it sets a
session cookie (HttpOnly, SameSite=Strict) in that browser and the link is
void; restart the console for a new one. Every action carries a CSRF token,
requests for another Host or from another Origin are refused, and the pages
run no script but the console's own.

  mcpx-fw console                        listen on console.addr (127.0.0.1, a free port)
  mcpx-fw console --addr 127.0.0.1:8765  a fixed port

The console listens only on a loopback address unless console.allow_remote is
true (it has no TLS: use an SSH tunnel instead where you can).`,
		Args: args(0, "mcpx-fw console [--addr 127.0.0.1:8765] [--config FILE]"),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return withStore(c, func(_ context.Context, rt *runtime) error {
				if addr == "" {
					return serveConsole(ctx, c, rt, "console.addr", rt.cfg.Console.Addr)
				}
				return serveConsole(ctx, c, rt, "--addr", addr)
			})
		},
	}
	c.Flags().StringVar(&addr, "addr", "", "host:port to listen on (default console.addr, 127.0.0.1:0)")
	return c
}

// serveConsole listens at addr, which source (--addr or console.addr)
// set, prints the sign-in link and serves until ctx ends.
func serveConsole(ctx context.Context, c *cobra.Command, rt *runtime, source, addr string) error {
	ln, err := consoleListen(addr, rt.cfg.Console.AllowRemote)
	if err != nil {
		return listenError(source, addr, err)
	}
	s := console.New(consoleActions{rt: rt}, ln.Addr().String())
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(c.ErrOrStderr(), "mcpx-fw console: sign in at http://%s%s\n(the link works once; stop with Ctrl-C)\n", ln.Addr(), s.LoginPath())
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// consoleListen opens the console's listener, refusing an address off
// this machine unless allowed, and an unspecified one (0.0.0.0, ::)
// always: the console answers only to the Host it listens at.
func consoleListen(addr string, remote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageError{fmt.Errorf("console address %q: %w\nTry: mcpx-fw console --addr 127.0.0.1:8765", addr, err)}
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return nil, usageError{fmt.Errorf("console address %q: give an IP address, not a name\nTry: mcpx-fw console --addr 127.0.0.1:8765", addr)}
	case ip.IsUnspecified():
		return nil, usageError{fmt.Errorf("console address %q: name one address the browser will use, not every address", addr)}
	case !ip.IsLoopback() && !remote:
		return nil, usageError{fmt.Errorf("console address %q is not loopback: set console.allow_remote: true to serve other machines (no TLS: prefer an SSH tunnel)", addr)}
	}
	return net.Listen("tcp", addr)
}
