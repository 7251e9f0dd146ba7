package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

func policyCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "policy",
		Short: "Work with the Rego policies",
	}
	c.AddCommand(policyTestCommand())
	return c
}

func policyTestCommand() *cobra.Command {
	var verbose bool
	c := &cobra.Command{
		Use:   "test [DIR…]",
		Short: "Run the policies' *_test.rego tests, as stock 'opa test' does",
		Long: `test runs every test_* rule in the policy directory (policy.dir from the
config, or the directories given) with OPA's own test runner, so the result is
the same as 'opa test DIR'. It exits 1 when a test fails.`,
		RunE: func(c *cobra.Command, dirs []string) error {
			if len(dirs) == 0 {
				cfg, err := loadConfig(configFlag(c))
				if err != nil {
					return err
				}
				dirs = []string{cfg.Policy.Dir}
			}
			passed, failed, err := engine.RunPolicyTests(c.Context(), dirs, c.OutOrStdout(), verbose)
			if err != nil {
				return err
			}
			if failed > 0 || passed == 0 {
				return withCode(exitFailure, fmt.Errorf("policy tests: %d passed, %d failed", passed, failed))
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every test")
	return c
}
