package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// exitGate is policy replay's exit status when the candidate fails the
// gate (--fail-on): what a CI job reads as "do not merge".
const exitGate = 4

// replayFlags are policy replay's options.
type replayFlags struct {
	candidate, server, failOn string
	since                     time.Duration
	json                      bool
}

func policyReplayCommand() *cobra.Command {
	var f replayFlags
	c := &cobra.Command{
		Use:   "replay --candidate DIR [--since DURATION] [--server NAME] [--fail-on loosened|changed|never] [--json]",
		Short: "Decide recorded traffic again with a candidate policy and show what would change",
		Long: `replay reads the decisions serve recorded in the store (the state dir's,
or store.url's, shared by every replica) and decides each again with the
candidate policy in DIR, compiled as policy.dir would be (its own baseline,
servers' packages, capabilities and schema, with the servers' settings from
the config). It re-decides exactly what the policy saw: the input document
kept with each decision (while replay.keep is set), usage and approval at
the time included. Nothing is charged, queued, logged or recorded: replay
only reads the store.

It prints, per server, kind and stage, each change of outcome (active ->
candidate) with its count, up to five decision ids and the candidate's
reason codes, what the candidate would let through (pass) that the active
policy blocked, held for review or refused on an error listed first; then
the outcomes that stay, and the decisions it could not replay, counted and
named: those decided before the policy ran (a validation blocker) and those
whose input was not kept (replay.keep was 0, pruned by age or past
replay.max_bytes or older than the store's keeping, or dropped under load or lost when serve stopped
abruptly).

--json prints the same as one document: {"candidate", "revision", "since"
(absent: every decision), "server" (absent: every server), "decisions", "replayed", "changes": [{"server", "kind", "stage",
"active", "candidate", "loosened", "count", "examples", "reasons"}],
"unchanged": [{"server", "kind", "stage", "outcome", "count"}],
"not_kept": [{"cause": "before-policy"|"not-kept", "count", "examples"}]}.

Exit status: 0 when the candidate passes the gate, 4 when it fails it
(--fail-on loosened, the default: it would let through anything the active
policy blocked, held or refused; changed: it changes any outcome; never:
report only), 2 when it does not compile or replay was called wrongly, 1
when replay could not run (no store, an unreadable input).`,
		Example: `  mcpx-fw policy replay --candidate ./policies-next
  mcpx-fw policy replay --candidate ./policies-next --since 24h --server github-mcp
  mcpx-fw policy replay --candidate ./policies-next --fail-on changed --json`,
		Args: args(0, "mcpx-fw policy replay --candidate DIR"),
		RunE: func(c *cobra.Command, _ []string) error {
			return policyReplay(c, f)
		},
	}
	c.Flags().StringVar(&f.candidate, "candidate", "", "the candidate policy folder, relative to the working folder (required)")
	c.Flags().DurationVar(&f.since, "since", 0, "replay decisions made this long ago or later (default: replay.keep; every decision when it is 0)")
	c.Flags().StringVar(&f.server, "server", "", "replay only the decisions of this server (one the config names)")
	c.Flags().StringVar(&f.failOn, "fail-on", "loosened", "exit 4 when the candidate: loosened (lets through what was blocked, held or refused), changed (changes any outcome), never")
	c.Flags().BoolVar(&f.json, "json", false, "print JSON for scripts")
	return c
}

func policyReplay(c *cobra.Command, f replayFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	rt, err := startReader(c.Context(), configFlag(c))
	if err != nil {
		return err
	}
	defer rt.close()
	if err := knownServer(rt.cfg, f.server); err != nil {
		return err
	}
	p, err := loadCandidate(c.Context(), rt, f.candidate)
	if err != nil {
		return err
	}
	since := f.since
	if !c.Flags().Changed("since") {
		since = rt.cfg.Replay.Keep
	}
	r := render.Replay{Candidate: f.candidate, Revision: p.Revision(), Server: f.server}
	if since > 0 {
		r.Since = time.Now().Add(-since).UTC()
	}
	if err := replayInto(c.Context(), rt.store, p, &r); err != nil {
		return err
	}
	r.Sort()
	if f.json {
		err = writeJSON(c.OutOrStdout(), r)
	} else {
		render.ReplayReport(c.OutOrStdout(), r)
	}
	if err != nil {
		return err
	}
	return f.gate(r)
}

// check refuses flags that make no replay.
func (f replayFlags) check() error {
	switch {
	case f.candidate == "":
		return usageError{errors.New("--candidate is required\nTry: mcpx-fw policy replay --candidate DIR")}
	case f.since < 0:
		return usageError{fmt.Errorf("--since %s is negative", f.since)}
	case f.failOn != "loosened" && f.failOn != "changed" && f.failOn != "never":
		return usageError{fmt.Errorf("--fail-on %q is none of loosened, changed, never", f.failOn)}
	}
	return candidateFolder(f.candidate)
}

// candidateFolder refuses a --candidate that is no folder, in words a
// user reads at once rather than as a compile error.
func candidateFolder(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageError{fmt.Errorf("--candidate %s: no such folder", dir)}
	case err != nil:
		return usageError{fmt.Errorf("--candidate %s: %w", dir, err)}
	case !fi.IsDir():
		return usageError{fmt.Errorf("--candidate %s is a file, not a policy folder", dir)}
	}
	return nil
}

// knownServer refuses a --server the config does not name: a misspelt
// name would replay nothing and pass the gate. Without servers in the
// config (no config at all) every name is taken as given.
func knownServer(cfg *config.Config, name string) error {
	if name == "" || len(cfg.Servers) == 0 {
		return nil
	}
	if _, ok := cfg.Servers[name]; ok {
		return nil
	}
	return usageError{fmt.Errorf("--server %s: the config names no such server (it names %s)", name, strings.Join(slices.Sorted(maps.Keys(cfg.Servers)), ", "))}
}

// loadCandidate compiles DIR as serve compiles policy.dir: the engine's
// own loader, the config's policy timeout and servers' settings. A
// candidate that does not compile is a one-line error, exit 2.
func loadCandidate(ctx context.Context, rt *runtime, dir string) (*engine.Policy, error) {
	p, err := engine.LoadPolicy(ctx, engine.PolicyConfig{Dir: dir, Timeout: rt.cfg.Policy.Timeout, Data: policyData(rt.cfg)})
	if err != nil {
		return nil, withCode(exitUsage, fmt.Errorf("candidate %s does not compile: %s", dir, inert.Folded(err.Error())))
	}
	return p, nil
}

// replayInto decides every recorded decision r selects again with p and
// counts it into r; one without a kept input is counted by cause.
func replayInto(ctx context.Context, st *review.Store, p *engine.Policy, r *render.Replay) error {
	return st.Replay(ctx, review.ReplayFilter{Since: r.Since, Server: r.Server}, func(d review.Replayed) error {
		switch {
		case !d.Kept:
			r.AddNotKept(render.CauseNotKept, d.Decision.ID)
			return nil
		case d.Input.Input == nil:
			r.AddNotKept(render.CauseBeforePolicy, d.Decision.ID)
			return nil
		}
		v, err := engine.Redecide(ctx, p, d.Input)
		if err != nil {
			return err
		}
		in := d.Input
		r.AddReplayed(in.Server, in.Kind, in.Stage, in.Outcome, v.Outcome.String(), in.DecisionID, v.ReasonCodes())
		return nil
	})
}

// gate is replay's exit status for r under --fail-on.
func (f replayFlags) gate(r render.Replay) error {
	switch {
	case f.failOn == "loosened" && r.Loosened() > 0:
		return withCode(exitGate, fmt.Errorf("the candidate would let through %d decision(s) the active policy blocked, held or refused (--fail-on loosened)", r.Loosened()))
	case f.failOn == "changed" && r.Changed() > 0:
		return withCode(exitGate, fmt.Errorf("the candidate changes the outcome of %d decision(s) (--fail-on changed)", r.Changed()))
	}
	return nil
}
