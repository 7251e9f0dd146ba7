package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStockOPAAgrees runs the CI commands on the shipped policies with
// stock opa: the sandbox (capabilities.json has no network builtins), the
// input schema, strict checks, formatting and the tests all hold for opa as
// they do for mcpx-fw.
func TestStockOPAAgrees(t *testing.T) {
	opa := opaBinary(t)
	policies := repoPath(t, "policies")
	caps := repoPath(t, "policies/capabilities.json")
	tests := []struct {
		name string
		args []string
		fail string // "" when the command must succeed, else what it must say
	}{
		{"check", []string{"check", "--strict", "--capabilities", caps, "-s", repoPath(t, "policies/schemas/input.json"), policies}, ""},
		{"fmt", []string{"fmt", "--list", "--fail", policies}, ""},
		{"test", []string{"test", "--capabilities", caps, "--coverage", "--threshold", "90", policies}, ""},
		{"sandbox", []string{"check", "--capabilities", caps, repoPath(t, "testdata/policies/http-send")}, "undefined function http.send"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(opa, tt.args...).CombinedOutput()
			switch {
			case tt.fail == "" && err != nil:
				t.Errorf("opa %s: %v\n%s", strings.Join(tt.args, " "), err, out)
			case tt.fail != "" && (err == nil || !strings.Contains(string(out), tt.fail)):
				t.Errorf("opa %s: %v, want a failure mentioning %q\n%s", strings.Join(tt.args, " "), err, tt.fail, out)
			}
		})
	}
}
