package main

import (
	"strings"
	"testing"
)

// TestUsageErrorsAreOneLine: every way of calling a command wrongly (an
// unknown command or subcommand, an unknown flag, a wrong number of
// arguments, flags that exclude each other) exits 2 with one line that
// names the command once, after the program's own prefix, and says what to
// try.
func TestUsageErrorsAreOneLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `unknown command "bogus". Try: mcpx-fw --help`},
		{[]string{"serv"}, `(did you mean serve?)`},
		{[]string{"policy", "evl"}, `unknown command "policy evl" (did you mean eval?). Try: mcpx-fw policy --help`},
		{[]string{"serve", "--nope"}, `serve: unknown flag: --nope. Try: mcpx-fw serve --help`},
		{[]string{"review", "show"}, `review show takes 1 argument, got 0. Try: mcpx-fw review show rv-`},
		{[]string{"serve", "extra"}, `serve takes no arguments, got 1. Try: mcpx-fw serve`},
		{[]string{"serve", "--http", "8080"}, `is not HOST:PORT. Try: mcpx-fw serve --http 127.0.0.1:8080`},
		{[]string{"review", "show", "rv-0", "--json", "--full"}, `none of the others can be`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			res := runCLI(t, tt.args...)
			if res.code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %q", res.code, exitUsage, res.stderr)
			}
			if !oneLine(res.stderr) || !strings.HasPrefix(res.stderr, "mcpx-fw: ") || strings.HasPrefix(res.stderr, "mcpx-fw: mcpx-fw") {
				t.Errorf("stderr is not one line naming the command once: %q", res.stderr)
			}
			if !strings.Contains(res.stderr, tt.want) {
				t.Errorf("stderr %q does not say %q", res.stderr, tt.want)
			}
		})
	}
}

// TestGroupAloneStillPrintsItsHelp: a command that only groups others,
// called alone, prints its help and exits 0.
func TestGroupAloneStillPrintsItsHelp(t *testing.T) {
	res := runCLI(t, "policy")
	if res.code != 0 || !strings.Contains(res.stdout, "Available Commands:") || res.stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}
