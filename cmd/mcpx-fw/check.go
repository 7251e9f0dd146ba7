package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// checkFlags are check's options.
type checkFlags struct {
	noStart bool
	timeout time.Duration
}

func checkCommand() *cobra.Command {
	var f checkFlags
	c := &cobra.Command{
		Use:   "check",
		Short: "Run serve's start-up path, start each server once, try the policy, and stop",
		Long: `check loads the config exactly as serve does (both need one: --config FILE,
MCPXFW_CONFIG, or mcpx-fw.yaml in the working folder), opens the state dir, compiles
the policies, looks up every upstream command and, when an upstream is to run
isolated, checks once that this system can isolate it. On success it says,
per server, whether it runs isolated and, if not, why; and, when one is,
which of your files isolated upstreams can read but not change (the
start-up files of your shell, editors, git and login, the folders on PATH
you can write, isolation.read_only) and which they could still write (such
an entry point that does not exist yet, which one could create).

Then it proves what it can. It starts each server once, as serve would
(isolated, with its env; an HTTP server with its headers), initializes it
and lists its tools, each within --timeout, a few at once, and stops it:
"ok: NAME: N tools (isolated)". And it has the policy decide a sample
request and answer of each kind (sampling, elicitation in form and in URL
mode, roots) for every server, to find a deny or review rule that gives
something other than an object with a code and a message, which would
fail every such request at run time. What the policy decides is never a
problem.

It names every problem on a line of its own on stderr: a server whose
program is not found, that exits or fails before it lists its tools (with
the end of what it wrote to stderr, escaped), a rule of the wrong shape.
It exits 0 when there is none and serve would start, 1 otherwise.
--no-start skips starting the servers and looking up their programs (CI
without the servers' runtimes); the rest is checked.

With policy.bundle.url set, the policy is the bundle kept in the state dir
(verified and compiled again, no network needed), or, when none is kept
yet, the one downloaded now, as serve would; check names the bundle's URL,
revision and where the last good one is kept.

check prints its report and nothing else: its logs go to log.file when the
config names one, and nowhere otherwise. It creates no review store: when
the state dir holds none yet, it says serve will create it, and checks the
rest with a temporary one.`,
		Example: `  mcpx-fw check --config mcpx-fw.yaml
  mcpx-fw check --no-start      # in CI, without the servers' runtimes
  mcpx-fw check --timeout 2m    # a server that downloads itself first (npx -y)`,
		Args: args(0, "mcpx-fw check --config FILE"),
		RunE: func(c *cobra.Command, _ []string) error {
			path, err := requiredConfig(c)
			if err != nil {
				return err
			}
			if f.timeout <= 0 {
				return usageError{fmt.Errorf("--timeout %s is not positive", f.timeout)}
			}
			return runCheck(c, path, f)
		},
	}
	c.Flags().BoolVar(&f.noStart, "no-start", false, "do not start the servers nor look up their programs")
	c.Flags().DurationVar(&f.timeout, "timeout", 30*time.Second, "how long each server has to start, initialize and list its tools")
	return c
}

// runCheck is check: the start-up report, then each server started, then
// the policy tried; every problem found is a line of the error returned.
func runCheck(c *cobra.Command, path string, f checkFlags) error {
	ck, err := startChecking(c.Context(), path)
	if err != nil {
		return err
	}
	rt := ck.rt
	defer rt.close()
	w := c.OutOrStdout()
	fmt.Fprintf(w, "ok: %d server(s), policy revision %s, state dir %s\n", len(ck.names), rt.engine.Revision(), rt.cfg.StateDir)
	if err := reportStartup(c, rt); err != nil {
		return err
	}
	problems, err := checkServersStart(c, ck, f)
	if err != nil {
		return err
	}
	problems = append(problems, checkPolicy(c.Context(), rt, ck.names)...)
	reportFreshStore(w, rt, ck.fresh)
	if len(problems) > 0 {
		return config.ProblemsError(problems)
	}
	return nil
}

// reportStartup is the part of check's report on what serve's start-up
// path found: the policy, the store, the seal key, the ops token and how
// each server is isolated.
func reportStartup(c *cobra.Command, rt *runtime) error {
	w := c.OutOrStdout()
	printPolicySource(w, rt)
	printShadowSource(w, rt)
	if rt.store.Backend() != "sqlite" {
		v, err := rt.store.SchemaVersion(c.Context())
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "store: %s %s, schema version %d\n", rt.store.Backend(), rt.store.Path(), v)
	}
	if rt.cfg.Seal.KeyFile != "" {
		key, err := sealKey(rt.cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "seal key: %s (id %s; every replica must show the same)\n", rt.cfg.Seal.KeyFile, seal.KeyID(key))
	}
	if rt.opsToken != nil {
		fmt.Fprintf(w, "ops token: %s (required for /metrics, the readiness checks and the full /status)\n", rt.cfg.Metrics.TokenFile)
	}
	for _, line := range rt.isolation.describe(rt.cfg) {
		fmt.Fprintln(w, line)
	}
	return nil
}

// checkServersStart starts each server once (startServers) and prints its
// ok line, or, with --no-start, says each was not started; it returns the
// problem lines, a server whose program is not found first.
func checkServersStart(c *cobra.Command, ck *checking, f checkFlags) ([]string, error) {
	w := c.OutOrStdout()
	if f.noStart {
		for _, name := range ck.names {
			fmt.Fprintf(w, "skipped: %s: not started (--no-start)\n", name)
		}
		return nil, nil
	}
	var problems []string
	for _, name := range ck.missing {
		problems = append(problems, missingLine(ck.rt.cfg, name))
	}
	ups, err := upstreamsOf(ck.rt)
	if err != nil {
		return nil, err
	}
	for _, r := range startServers(c.Context(), ck.rt, ups, f.timeout) {
		if r.ok != "" {
			fmt.Fprintln(w, r.ok)
		} else {
			problems = append(problems, r.problem)
		}
	}
	return problems, nil
}

// printShadowSource says which shadow policy is judged beside the active
// one, if any. One that does not load is a warning, not a problem: serve
// starts with it (reporting it as failed) and the active policy decides.
func printShadowSource(w io.Writer, rt *runtime) {
	st, ok := rt.engine.ShadowStatus()
	switch {
	case !ok:
	case st.Revision == "":
		shadowWarning(w, st.Location, st.LastError)
	default:
		fmt.Fprintf(w, "shadow policy: %s %s, revision %s (judged beside the active one, never enforced)\n", st.Source, st.Location, st.Revision)
	}
}

// shadowWarning is check's one line for a shadow that did not load, OPA's
// multi-line error folded into it.
func shadowWarning(w io.Writer, location, lastError string) {
	fmt.Fprintf(w, "warning: shadow policy %s did not load; serve starts, reports it as failed and decides with the active policy alone: %s\n",
		location, inert.Folded(lastError))
}

// printPolicySource says which policy decides: the folder, the shipped
// set built into the binary, or the bundle and where its last good copy
// is kept.
func printPolicySource(w io.Writer, rt *runtime) {
	switch st := rt.engine.PolicyStatus(); st.Source {
	case engine.SourceBundle:
		fmt.Fprintf(w, "policy bundle: %s, revision %s, last good kept in %s\n",
			st.Location, st.Revision, policybundle.PersistedPath(rt.cfg.StateDir))
	case engine.SourceEmbedded:
		fmt.Fprintln(w, "policy: the shipped policies built into mcpx-fw (no policy.dir; mcpx-fw policy init writes a folder to edit)")
	default:
		fmt.Fprintf(w, "policy: folder %s\n", st.Location)
	}
}
