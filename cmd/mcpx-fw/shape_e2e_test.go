package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// formShape is what a host saw of npm server-everything's
// trigger-elicitation-request: the requestedSchema as it reached the host
// (its bytes as the npm host printed them, members in the order they
// arrived) and the tool's result text, which quotes the answer as the
// server parsed it (members in the order they arrived there).
type formShape struct {
	Schema json.RawMessage
	Text   string
}

// npmFormRun calls trigger-elicitation-request with the npm host in mode
// (legacy: 2025-11-25; pin: 2026-07-28) against command, answering the
// form field by field in the schema's order.
func npmFormRun(t *testing.T, mode string, command []string) formShape {
	t.Helper()
	node := nodeSetup(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	args := append([]string{repoPath(t, "testdata/npm/host2026.mjs"), "--mode", mode, "--elicit", "accept",
		"--calls", `[{"name":"trigger-elicitation-request"}]`}, command...)
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Stderr = &stderr
	raw, _ := cmd.Output()
	var got struct {
		Calls []struct {
			Result *struct{ Content []struct{ Text string } }
		}
		ElicitRequests []struct {
			RequestedSchema json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &got); err != nil || len(got.Calls) != 1 || got.Calls[0].Result == nil || len(got.ElicitRequests) != 1 {
		t.Fatalf("npm host printed %q (%v); stderr:\n%s", raw, err, stderr.String())
	}
	var text strings.Builder
	for _, b := range got.Calls[0].Result.Content {
		text.WriteString(b.Text)
	}
	return formShape{got.ElicitRequests[0].RequestedSchema, text.String()}
}

// TestFormShapeThroughFirewall: npm server-everything's form reaches the
// npm host through `mcpx-fw serve` with the same requestedSchema, member
// order included, as directly, and the host's answer reaches the server
// with its members in the host's order: the tool's result text, which
// quotes the answer, is the same byte for byte. Behind a 2026-07-28 host
// the legacy server's push is bridged; the reference is the 2025-11-25
// host directly (the npm server speaks only 2025).
func TestFormShapeThroughFirewall(t *testing.T) {
	want := npmFormRun(t, "legacy", npmEverythingCommand(t))
	if !strings.Contains(string(want.Schema), `"properties":{"name":`) || !strings.Contains(want.Text, "✅") {
		t.Fatalf("directly: schema %s, text %q; want the server's form, accepted", want.Schema, want.Text)
	}
	for _, mode := range []string{"legacy", "pin"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, "  up:\n"+serverEntry(npmEverythingCommand(t), ""))
			got := npmFormRun(t, mode, firewallCommand(cfg))
			if string(got.Schema) != string(want.Schema) {
				t.Errorf("requestedSchema through mcpx-fw:\n%s\ndirectly:\n%s", got.Schema, want.Schema)
			}
			if got.Text != want.Text {
				t.Errorf("result through mcpx-fw:\n%s\ndirectly:\n%s", got.Text, want.Text)
			}
		})
	}
}
