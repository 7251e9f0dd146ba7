package sandbox_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// TestEnviron: an upstream gets the allow-listed part of serve's
// environment and its own variables, never the rest: credentials of other
// servers, MCPXFW_* settings, session sockets.
func TestEnviron(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "HOME=/home/op", "USER=op", "LOGNAME=op", "LANG=C.UTF-8", "LC_ALL=C", "LC_TIME=en_GB",
		"TZ=UTC", "TERM=xterm", "TMPDIR=/tmp/op", "HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost",
		"SSL_CERT_FILE=/etc/ca.pem",
		"GITHUB_TOKEN=ghp_secret", "MCPXFW_STATE_DIR=/state", "AWS_SECRET_ACCESS_KEY=k", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1/bus",
		"SSH_AUTH_SOCK=/run/user/1/ssh", "DISPLAY=:0", "XDG_RUNTIME_DIR=/run/user/1", "LC_=odd", "LD_PRELOAD=/evil.so", "malformed",
	}
	tests := []struct {
		name string
		own  map[string]string
		want []string
	}{
		{"allow-list only", nil, []string{
			"HOME=/home/op", "HTTPS_PROXY=http://proxy:3128", "LANG=C.UTF-8", "LC_ALL=C", "LC_TIME=en_GB", "LOGNAME=op",
			"PATH=/usr/bin", "SSL_CERT_FILE=/etc/ca.pem", "TERM=xterm", "TMPDIR=/tmp/op", "TZ=UTC", "USER=op", "no_proxy=localhost"}},
		{"own variables added, and win", map[string]string{"API_KEY": "mine", "PATH": "/opt/bin", "GITHUB_TOKEN": "own"}, []string{
			"API_KEY=mine", "GITHUB_TOKEN=own", "HOME=/home/op", "HTTPS_PROXY=http://proxy:3128", "LANG=C.UTF-8", "LC_ALL=C",
			"LC_TIME=en_GB", "LOGNAME=op", "PATH=/opt/bin", "SSL_CERT_FILE=/etc/ca.pem", "TERM=xterm", "TMPDIR=/tmp/op", "TZ=UTC",
			"USER=op", "no_proxy=localhost"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, sandbox.Environ(parent, tt.own)); diff != "" {
				t.Errorf("Environ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIsolatedEnviron: an isolated upstream's TMPDIR is its own /tmp, not
// the folder serve's names, whether serve has one or not; one the server
// configures itself still wins.
func TestIsolatedEnviron(t *testing.T) {
	for _, tt := range []struct {
		parent []string
		own    map[string]string
		want   []string
	}{
		{[]string{"PATH=/usr/bin", "TMPDIR=/home/op/tmp"}, nil, []string{"PATH=/usr/bin", "TMPDIR=/tmp"}},
		{[]string{"PATH=/usr/bin"}, nil, []string{"PATH=/usr/bin", "TMPDIR=/tmp"}},
		{[]string{"TMPDIR=/home/op/tmp"}, map[string]string{"TMPDIR": "/srv/big"}, []string{"TMPDIR=/srv/big"}},
	} {
		if diff := cmp.Diff(tt.want, sandbox.IsolatedEnviron(tt.parent, tt.own)); diff != "" {
			t.Errorf("IsolatedEnviron(%q, %v) (-want +got):\n%s", tt.parent, tt.own, diff)
		}
	}
}
