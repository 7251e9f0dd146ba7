package config

import (
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
)

// TestMetricsAddrRemote: metrics.addr is loopback only unless
// metrics.allow_remote, as http.allow_remote is for serve --http.
func TestMetricsAddrRemote(t *testing.T) {
	configtest.CleanEnv(t)
	for _, tc := range []struct {
		name, content string
		want          []string // substrings of the error; none: accepted
	}{
		{"every interface refused", "metrics:\n  addr: 0.0.0.0:9464\n", []string{"metrics.addr", "loopback", "metrics.allow_remote"}},
		{"LAN address refused", "metrics:\n  addr: 192.168.1.10:9464\n", []string{"metrics.addr", "loopback"}},
		{"empty host refused", "metrics:\n  addr: :9464\n", []string{"metrics.addr", "loopback"}},
		{"not HOST:PORT", "metrics:\n  addr: localhost\n", []string{"metrics.addr", "HOST:PORT"}},
		{"loopback accepted", "metrics:\n  addr: 127.0.0.1:0\n", nil},
		{"localhost accepted", "metrics:\n  addr: localhost:9464\n", nil},
		{"remote allowed", "metrics:\n  addr: 0.0.0.0:9464\n  allow_remote: true\n", nil},
		{"off by default", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(configtest.WriteFile(t, tc.content))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			configtest.WantError(t, err, tc.want...)
		})
	}
}
