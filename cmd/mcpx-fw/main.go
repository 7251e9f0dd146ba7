// Command mcpx-fw is a firewall for what MCP upstream servers ask of the
// host (sampling, elicitation, roots): an MCP proxy that validates, decides
// (with Rego policies) and, when a policy asks for it, holds for a person's
// review every such request and the host's answer to it. ARCHITECTURE.md
// at the repository's root maps its packages.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// Exit codes: 0 done, 1 refused or failed, 2 usage, 3 not found.
const (
	exitFailure  = 1
	exitUsage    = 2
	exitNotFound = 3
)

// exitError carries an exit code up to main with the one line to print.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

func main() {
	sandbox.Main() // the upstream launcher is this binary: see package sandbox
	os.Exit(run(os.Args[1:]))
}

// run executes the command line. What commands print goes through inert's
// sink (see package inert): an upstream's text that reaches the operator's
// terminal in a field no renderer escaped is escaped there, so nothing a
// command prints can be obeyed by the terminal. serve and demo-upstream
// speak MCP on the real stdout and do not use the command's writer.
func run(args []string) int {
	out, errOut := inert.NewWriter(os.Stdout), inert.NewWriter(os.Stderr)
	defer func() { _ = out.Flush(); _ = errOut.Flush() }()
	root := rootCommand()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	strictGroups(root)
	cmd, err := root.ExecuteC()
	err = usageOf(err)
	if err == nil {
		return 0
	}
	nameConfigOrigin(cmd, err)
	for _, line := range errorLines(err) {
		fmt.Fprintln(errOut, "mcpx-fw:", line)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if isUsageError(err) {
		return exitUsage
	}
	return exitFailure
}

// usageError marks errors in how a command was called.
type usageError struct{ error }

func isUsageError(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpx-fw",
		Short: "A policy-driven firewall for what MCP servers ask of the host",
		Long: `mcpx-fw sits between an MCP host and its upstream servers. Everything passes
through unchanged except what an upstream asks of the host: sampling (a
completion from the host's model), elicitation (a form or a URL for the user)
and roots. Each such request is validated, decided by Rego policies written
per server (deny, review by a person, or permit), and the host's answer is
checked before it goes back. Every decision is recorded.

Start with:  mcpx-fw demo`,
		Version:       versionText(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}")
	plainBoolUsage(root)
	root.PersistentFlags().String("config", "", "config file (default $MCPXFW_CONFIG, else mcpx-fw.yaml in the working folder, if present)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%s: %w\nTry: %s --help", typedName(c), err, c.CommandPath())}
	})
	root.AddCommand(serveCommand(), checkCommand(), reviewCommand(), auditCommand(), policyCommand(),
		storeCommand(), statusCommand(), demoCommand(), versionCommand(), demoUpstreamCommand(), consoleCommand(), hostCommand())
	return root
}

// configFlag returns the --config value of any subcommand, or
// MCPXFW_CONFIG when the flag is not given: a config named once for a
// shell, the way MCPXFW_STATE_DIR names a state dir.
func configFlag(c *cobra.Command) string {
	if s, _ := c.Flags().GetString("config"); s != "" {
		return s
	}
	return os.Getenv("MCPXFW_CONFIG")
}

// nameConfigOrigin makes a config file that is not there named by what
// named it (--config or MCPXFW_CONFIG), whichever command read it.
func nameConfigOrigin(c *cobra.Command, err error) {
	var nf *config.NotFoundError
	if c == nil || !errors.As(err, &nf) {
		return
	}
	if s, _ := c.Flags().GetString("config"); s != "" {
		nf.Origin = "--config"
	} else if os.Getenv("MCPXFW_CONFIG") != "" {
		nf.Origin = "MCPXFW_CONFIG"
	}
}

// requiredConfig is configFlag for serve and check, which have nothing
// to serve without a config file: with none named and no mcpx-fw.yaml in
// the working folder, a usage error says the three ways to give one.
func requiredConfig(c *cobra.Command) (string, error) {
	if p := configFlag(c); p != "" {
		return p, nil
	}
	if _, err := os.Stat(config.DefaultFile); err == nil {
		return "", nil
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "the working folder"
	}
	return "", usageError{fmt.Errorf("no config file: give --config FILE, set MCPXFW_CONFIG, or put %s in %s", config.DefaultFile, wd)}
}

// args wraps cobra's positional-argument checks so a wrong count is a
// usage error (exit 2) with a hint.
func args(n int, hint string) cobra.PositionalArgs {
	return func(c *cobra.Command, a []string) error {
		if len(a) != n {
			return usageError{fmt.Errorf("%s takes %s, got %d\nTry: %s", typedName(c), argCount(n), len(a), hint)}
		}
		return nil
	}
}
