package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

func checkCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Run serve's start-up path (config, state dir, policies, commands) and stop",
		Long: `check loads the config exactly as serve does (both need one: --config FILE,
MCPXFW_CONFIG, or mcpx-fw.yaml in the working folder), opens the state dir, compiles
the policies, looks up every upstream command and, when an upstream is to run
isolated, checks once that this system can isolate it; then it stops. It exits
0 when serve would start, and prints the first problem otherwise. On success
it says, per server, whether it runs isolated and, if not, why; and, when
one is, which of your files isolated upstreams can read but not change (the
start-up files of your shell, editors, git and login, the folders on PATH
you can write, isolation.read_only) and which they could still write (such
an entry point that does not exist yet, which one could create).

With policy.bundle.url set, the policy is the bundle kept in the state dir
(verified and compiled again, no network needed), or, when none is kept
yet, the one downloaded now, as serve would; check names the bundle's URL,
revision and where the last good one is kept.

check prints its report and nothing else: its logs go to log.file when the
config names one, and nowhere otherwise. It creates no review store: when
the state dir holds none yet, it says serve will create it, and checks the
rest with a temporary one.`,
		Args: args(0, "mcpx-fw check --config FILE"),
		RunE: func(c *cobra.Command, _ []string) error {
			path, err := requiredConfig(c)
			if err != nil {
				return err
			}
			rt, fresh, err := startChecking(c.Context(), path)
			if err != nil {
				return err
			}
			defer rt.close()
			fmt.Fprintf(c.OutOrStdout(), "ok: %d server(s), policy revision %s, state dir %s\n",
				len(rt.cfg.Servers), rt.engine.Revision(), rt.cfg.StateDir)
			printPolicySource(c.OutOrStdout(), rt)
			if rt.store.Backend() != "sqlite" {
				v, err := rt.store.SchemaVersion(c.Context())
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "store: %s %s, schema version %d\n", rt.store.Backend(), rt.store.Path(), v)
			}
			if rt.cfg.Seal.KeyFile != "" {
				key, err := sealKey(rt.cfg)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "seal key: %s (id %s; every replica must show the same)\n", rt.cfg.Seal.KeyFile, seal.KeyID(key))
			}
			if rt.opsToken != nil {
				fmt.Fprintf(c.OutOrStdout(), "ops token: %s (required for /metrics, the readiness checks and the full /status)\n", rt.cfg.Metrics.TokenFile)
			}
			for _, line := range rt.isolation.describe(rt.cfg) {
				fmt.Fprintln(c.OutOrStdout(), line)
			}
			reportFreshStore(c.OutOrStdout(), rt, fresh)
			return nil
		},
	}
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
