package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// everythingServer finds the Go SDK's conformance everything-server (a real
// peer nobody here wrote), installed by the README's test command, or
// builds it from the module cache.
func everythingServer(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("everything-server"); err == nil {
		return p
	}
	gopath, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "everything-server")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p := filepath.Join(t.TempDir(), "everything-server")
	out, err := exec.Command("go", "build", "-o", p, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput()
	if err != nil {
		t.Fatalf("everything-server is not installed and could not be built: %v\n%s", err, out)
	}
	return p
}

func TestEverythingServerSampling(t *testing.T) {
	server := "  everything:\n    command: [" + everythingServer(t) + "]\n    label: Go SDK everything-server\n    max_tokens: %d\n"
	cases := []struct {
		name     string
		maxTok   int
		prompt   string
		wantText string
	}{
		{name: "permitted", maxTok: 1000, prompt: "Say hello.", wantText: "LLM response: the host's answer"},
		// The upstream asks for 100 tokens; a cap of 50 makes the policy deny.
		{name: "denied over the cap", maxTok: 50, prompt: "Say hello.", wantText: "User rejected sampling request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, fmt.Sprintf(server, tc.maxTok))
			host := startFirewall(t, cfg, answerWith(hostAnswer))
			res, err := host.CallTool(t.Context(), "test_sampling", map[string]any{"prompt": tc.prompt})
			if err != nil {
				t.Fatalf("test_sampling: %v", err)
			}
			if !strings.Contains(res.Text, tc.wantText) {
				t.Fatalf("test_sampling returned %q (isError %v), want it to contain %q", res.Text, res.IsError, tc.wantText)
			}
		})
	}
}
