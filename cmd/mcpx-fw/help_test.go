package main

import (
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// TestHelpShowsBooleanFlagsPlainly: every command's help lists a boolean
// flag as cobra's own template does ("-h, --help   help for list"),
// never with a "[=true|false]" after it, and the flag still takes no
// value.
func TestHelpShowsBooleanFlagsPlainly(t *testing.T) {
	noise := regexp.MustCompile(`--[a-z-]+\[=`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		args := append(strings.Fields(strings.TrimPrefix(c.CommandPath(), "mcpx-fw")), "--help")
		res := runCLI(t, args...)
		if res.code != 0 || noise.MatchString(res.stdout) || !strings.Contains(res.stdout, "  -h, --help ") {
			t.Errorf("%s --help: exit %d, flags listed with noise or without -h, --help:\n%s", c.CommandPath(), res.code, res.stdout)
		}
	}
	walk(rootCommand())
	res := runCLI(t, "review", "list", "--help")
	if !regexp.MustCompile(`(?m)^  -h, --help +help for list$`).MatchString(res.stdout) ||
		!regexp.MustCompile(`(?m)^      --json +one JSON object per line$`).MatchString(res.stdout) {
		t.Errorf("review list --help:\n%s", res.stdout)
	}
}

// TestEvalHelpNamesEveryJSONKey: policy eval --help names every key its
// --json prints.
func TestEvalHelpNamesEveryJSONKey(t *testing.T) {
	out := evalJSON(engine.KindSampling, engine.Verdict{Err: errors.New("could not decide")}, map[string]any{})
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	help := policyEvalCommand().Long
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !strings.Contains(help, `"`+k+`"`) {
			t.Errorf("policy eval --help does not name the --json key %q", k)
		}
	}
}
