package main

import (
	"slices"
	"strings"
	"testing"
)

func TestSafeCodes(t *testing.T) {
	many := make([]string, maxNotifyCodes+3)
	for i := range many {
		many[i] = "c"
	}
	cases := []struct {
		name string
		in   []string
		want []string
	}{
		{"identifiers pass", []string{"asks-for-secrets", "e2e.hold_1", "Burst"}, []string{"asks-for-secrets", "e2e.hold_1", "Burst"}},
		{"upstream text is withheld", []string{"say $(id)", "a\x1b[2Jb", "x,y", "-leading", "", "é"},
			[]string{withheldCode, withheldCode, withheldCode, withheldCode, withheldCode, withheldCode}},
		{"64 bytes pass, 65 do not", []string{strings.Repeat("a", 64), strings.Repeat("a", 65)}, []string{strings.Repeat("a", 64), withheldCode}},
		{"at most maxNotifyCodes", many, many[:maxNotifyCodes]},
		{"none", nil, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := safeCodes(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("safeCodes(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestNotifyEnv: a notification's environment is the allow-list, the
// desktop session's variables and the review's facts, never the rest of
// serve's (which holds the upstreams' credentials).
func TestNotifyEnv(t *testing.T) {
	parent := []string{"PATH=/bin", "GITHUB_TOKEN=secret", "DISPLAY=:0", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/bus", "MCPXFW_STORE_URL=postgres://u:pw@h/db"}
	got := notifyEnv(parent, note{id: "rv-1", server: "peer", stage: "request", codes: []string{"a", "b"}})
	want := []string{"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/bus", "DISPLAY=:0", "MCPXFW_MORE=0", "MCPXFW_REASONS=a,b", "MCPXFW_REVIEW_ID=rv-1",
		"MCPXFW_SERVER=peer", "MCPXFW_STAGE=request", "PATH=/bin"}
	if !slices.Equal(got, want) {
		t.Errorf("notifyEnv = %q, want %q", got, want)
	}
}
