package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestPortInUseNamesItsFlagOrKey: a listener whose port another process
// holds fails in one line naming the flag or config key that set the
// address: --http for serve, --addr or console.addr for the console,
// metrics.addr for the ops listener.
func TestPortInUseNamesItsFlagOrKey(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	consoleCfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	appendConfig(t, consoleCfg, "console:\n  addr: "+addr+"\n")
	openStore(t, cfg) // the console opens the store serve made
	openStore(t, consoleCfg)
	opsCfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	appendConfig(t, opsCfg, "metrics:\n  addr: "+addr+"\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"serve --http", []string{"serve", "--config", cfg, "--http", addr}, "--http " + addr + ": the port is already in use"},
		{"console --addr", []string{"console", "--config", cfg, "--addr", addr}, "--addr " + addr + ": the port is already in use"},
		{"console.addr", []string{"console", "--config", consoleCfg}, "console.addr " + addr + ": the port is already in use"},
		{"metrics.addr", []string{"serve", "--config", opsCfg, "--http", "127.0.0.1:0"}, "metrics.addr " + addr + ": the port is already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, tt.args...)
			if res.code != exitFailure || !oneLine(res.stderr) || !strings.Contains(res.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and one line saying %q", res.code, res.stderr, exitFailure, tt.want)
			}
		})
	}
}
