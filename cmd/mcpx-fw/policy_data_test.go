package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
)

// The configuration policies see: budgets only where set, so a rule about
// a limit nobody configured does not fire; the default max_tokens cap where
// the entry is silent, and no cap where it says 0.
func TestPolicyDataBudgets(t *testing.T) {
	configtest.CleanEnv(t)
	cfg, err := config.Load(configtest.WriteFile(t, `servers:
  github-mcp:
    command: [cat]
    max_tokens: 4096
    budget: {hourly_tokens: 20000, burst_per_minute: 10}
  notes:
    command: [cat]
    budget: {burst_per_minute: 3}
  plain:
    command: [cat]
    max_tokens: 0
usage:
  windows: {day: 24h}
`))
	if err != nil {
		t.Fatal(err)
	}
	none := map[string]any{"elicitation": map[string]any{"allowed_hosts": []string{}}, "roots": map[string]any{"allow": []string{}}}
	with := func(server map[string]any) map[string]any {
		for k, v := range none {
			server[k] = v
		}
		return server
	}
	want := map[string]any{"default": "review", "servers": map[string]any{
		"github-mcp": with(map[string]any{"label": "", "max_tokens": 4096,
			"budget": map[string]any{"hourly_tokens": 20000, "burst_per_minute": 10}}),
		"notes": with(map[string]any{"label": "", "max_tokens": config.DefaultMaxTokens, "budget": map[string]any{"burst_per_minute": 3}}),
		"plain": with(map[string]any{"label": ""}),
	}}
	if diff := cmp.Diff(want, policyData(cfg)); diff != "" {
		t.Errorf("policy data (-want +got):\n%s", diff)
	}
	if got := cfg.Usage.Windows["day"]; got != 24*time.Hour {
		t.Errorf("usage.windows.day = %v", got)
	}
}

func TestPolicyDataConfigErrors(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"negative hourly tokens", "servers:\n  a:\n    command: [cat]\n    budget: {hourly_tokens: -1}\n", []string{"servers.a.budget.hourly_tokens"}},
		{"negative burst", "servers:\n  a:\n    command: [cat]\n    budget: {burst_per_minute: -2}\n", []string{"servers.a.budget.burst_per_minute"}},
		{"unknown budget key", "servers:\n  a:\n    command: [cat]\n    budget: {daily_tokens: 5}\n", []string{"daily_tokens"}},
		{"hour redefined", "usage:\n  windows: {hour: 2h}\n", []string{"usage.windows", "hour is always 1h0m0s"}},
		{"window name", "usage:\n  windows: {Last-Day: 24h}\n", []string{"usage.windows", "last-day"}},
		{"window duration", "usage:\n  windows: {day: 0s}\n", []string{"usage.windows", "day"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			_, err := config.Load(configtest.WriteFile(t, tt.content))
			configtest.WantError(t, err, tt.want...)
		})
	}
}

// A server's elicitation.allowed_hosts and roots.allow reach the policies
// as written, under data.mcpxfw.config.servers[name].
func TestPolicyDataElicitationRoots(t *testing.T) {
	configtest.CleanEnv(t)
	cfg, err := config.Load(configtest.WriteFile(t, `servers:
  docs:
    command: [cat]
    elicitation: {allowed_hosts: [auth.example.com, example.org]}
    roots: {allow: ["file:///home/me/project"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	server := policyData(cfg)["servers"].(map[string]any)["docs"].(map[string]any)
	want := map[string]any{"elicitation": map[string]any{"allowed_hosts": []string{"auth.example.com", "example.org"}},
		"roots": map[string]any{"allow": []string{"file:///home/me/project"}}}
	for key, v := range want {
		if diff := cmp.Diff(v, server[key]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
}
