package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeLogsTheSignalItStopsFor: serve stopped by SIGTERM (a service
// manager) or SIGINT (a terminal) logs one line naming the signal, and
// exits 0 as it always has.
func TestServeLogsTheSignalItStopsFor(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		name := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[sig]
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
			s := startHTTPServe(t, cfg)
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-s.done
			if err := s.cmd.Wait(); err != nil {
				t.Errorf("serve exited with %v after %s, want 0; stderr: %s", err, name, s.output())
			}
			log, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "serve.log"))
			if err != nil {
				t.Fatal(err)
			}
			want := `"msg":"stopping on a signal","signal":"` + name + `"`
			if n := strings.Count(string(log), want); n != 1 {
				t.Errorf("the log has %d lines with %s, want 1:\n%s", n, want, log)
			}
		})
	}
}
