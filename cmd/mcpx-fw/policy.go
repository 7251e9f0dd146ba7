package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/policies"
)

func policyCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "policy",
		Short: "Work with the Rego policies",
	}
	c.AddCommand(policyInitCommand(), policyTestCommand(), policyEvalCommand(), policyReplayCommand())
	return c
}

func policyTestCommand() *cobra.Command {
	var opts engine.PolicyTestOptions
	var threshold float64
	c := &cobra.Command{
		Use:   "test [DIR…]",
		Short: "Run the policies' *_test.rego tests, as stock 'opa test' does",
		Long: `test runs every test_* rule in the policy directory (policy.dir from the
config, the shipped policies when it names none, or the directories given)
with OPA's own test runner, so the result is the same as 'opa test DIR'.
--coverage prints OPA's JSON coverage report instead of the test list, and
--threshold N fails when fewer than N percent of the policy lines were
evaluated. It exits 1 when a test fails or coverage is
below the threshold.`,
		Example: `  mcpx-fw policy test -v
  mcpx-fw policy test --coverage --threshold 90 policies`,
		RunE: func(c *cobra.Command, dirs []string) error {
			if threshold < 0 || threshold > 100 {
				return usageError{fmt.Errorf("--threshold %v is not a percentage between 0 and 100", threshold)}
			}
			opts.Coverage = opts.Coverage || threshold > 0
			res, err := runPolicyTests(c, dirs, opts)
			if err != nil {
				return err
			}
			return policyTestVerdict(res, threshold)
		},
	}
	c.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "list every test")
	c.Flags().BoolVarP(&opts.Coverage, "coverage", "c", false, "print OPA's JSON coverage report")
	c.Flags().Float64Var(&threshold, "threshold", 0, "fail when coverage is below this percentage (implies --coverage)")
	return c
}

// runPolicyTests runs the tests of the directories given, else of
// policy.dir from the config, else of the shipped policies built into the
// binary.
func runPolicyTests(c *cobra.Command, dirs []string, opts engine.PolicyTestOptions) (engine.PolicyTestResult, error) {
	if len(dirs) == 0 {
		cfg, err := config.Load(configFlag(c))
		if err != nil {
			return engine.PolicyTestResult{}, err
		}
		if cfg.Policy.Dir == "" {
			return engine.RunPolicyTestsFS(c.Context(), policies.FS, c.OutOrStdout(), opts)
		}
		dirs = []string{cfg.Policy.Dir}
	}
	return engine.RunPolicyTests(c.Context(), dirs, c.OutOrStdout(), opts)
}

// policyTestVerdict is the exit status of a test run, worded as opa's.
func policyTestVerdict(res engine.PolicyTestResult, threshold float64) error {
	switch {
	case res.Failed > 0 || res.Passed == 0:
		return withCode(exitFailure, fmt.Errorf("policy tests: %d passed, %d failed", res.Passed, res.Failed))
	case res.Coverage < threshold:
		return withCode(exitFailure, fmt.Errorf("code coverage threshold not met: got %.2f instead of %.2f", res.Coverage, threshold))
	}
	return nil
}
