package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestLatePushNeverReachesAnotherCall: a legacy upstream behind a
// 2026-07-28 host that samples, so serve bridges each call (the upstream
// pushes, the host is asked by input request). The upstream answers a
// sample_late call, then pushes from work that call left running; the
// push goes out as soon as the next call reaches the same upstream
// process (await_late), or after 300 ms. A push names no call, so it
// belongs to none: whoever makes the next call (the same host over stdio,
// or another host of the same `serve --http`) is never asked for it, the
// upstream hears -32603 with reason no-host, and the next call completes.
func TestLatePushNeverReachesAnotherCall(t *testing.T) {
	tests := []struct {
		name string
		// hosts starts serve with cfg and returns the host that makes the
		// first call and the one that makes the next.
		hosts func(t *testing.T, ctx context.Context, cfg string) (first, next *peer.Host)
	}{
		{"the same host over stdio", func(t *testing.T, ctx context.Context, cfg string) (*peer.Host, *peer.Host) {
			h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg},
				ProtocolVersion: "2026-07-28", Answer: answerWith(hostAnswer)})
			if err != nil {
				t.Fatalf("start serve: %v", err)
			}
			t.Cleanup(func() { _ = h.Close() })
			return h, h
		}},
		{"another host over HTTP", func(t *testing.T, ctx context.Context, cfg string) (*peer.Host, *peer.Host) {
			s := startHTTPServe(t, cfg)
			var hosts [2]*peer.Host
			for i := range hosts {
				h, err := peer.ConnectHTTP(ctx, s.url, peer.HostOptions{ProtocolVersion: "2026-07-28", Answer: answerWith(hostAnswer)})
				if err != nil {
					t.Fatalf("connect host %d: %v", i+1, err)
				}
				t.Cleanup(func() { _ = h.Close() })
				hosts[i] = h.Host
			}
			return hosts[0], hosts[1]
		}},
	}
	const late = `{"messages":[{"role":"user","content":{"type":"text","text":"left over from the first call"}}],"maxTokens":10}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peerLog := filepath.Join(t.TempDir(), "peer.log")
			server := peerServer("peer", 1000) + fmt.Sprintf("    protocol: legacy\n    env: {MCPXFW_PEER_LOG: %q}\n", peerLog)
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, server)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			first, next := tt.hosts(t, ctx, cfg)
			hosts := []*peer.Host{first}
			if next != first {
				hosts = append(hosts, next)
			}

			// A push the upstream makes inside a call reaches the host:
			// the call is bridged.
			if res, err := first.CallTool(ctx, "sample", map[string]any{"params": json.RawMessage(plainRequest)}); err != nil ||
				!strings.Contains(res.Text, "the host's answer") {
				t.Fatalf("a bridged push inside its call: %+v, %v", res, err)
			}
			if asked := askedOf(hosts); len(asked) != 1 {
				t.Fatalf("the hosts were asked %d time(s) for one push inside its call", len(asked))
			}

			res, err := first.CallTool(ctx, "sample_late", map[string]any{"params": json.RawMessage(late), "after_ms": 300})
			if err != nil || res.IsError || res.Text != "scheduled" {
				t.Fatalf("sample_late: %+v, %v", res, err)
			}
			res, err = next.CallTool(ctx, "await_late", map[string]any{})
			if err != nil || res.IsError || !strings.HasPrefix(res.Text, "sent ") {
				t.Fatalf("the next call: %+v, %v", res, err)
			}
			outcome := waitPeerLine(t, peerLog, "late: ")
			for i, h := range hosts {
				for _, params := range askedOf([]*peer.Host{h}) {
					t.Errorf("host %d of %d was asked for the late push, which belongs to no call of its own: %s", i+1, len(hosts), params)
				}
			}
			var got peer.SampleOutcome
			if err := json.Unmarshal([]byte(outcome), &got); err != nil {
				t.Fatalf("late outcome %q: %v", outcome, err)
			}
			// Received, it is refused (-32603, no host); delayed by a loaded
			// machine until its session closed (a second after its call),
			// it fails on the closed session. Either way no host answered.
			switch {
			case got.Error == nil:
				t.Errorf("the late push got a completion: %s", outcome)
			case got.Error.Code == -32603 && strings.Contains(string(got.Error.Data), `"no-host"`):
			case got.Error.Code == -32603 || got.Error.Code == -1:
				t.Errorf("the late push got %s, want -32603 with reason no-host", outcome)
			default:
				t.Logf("the late push went out after its session closed: %s", outcome)
			}
		})
	}
}

// askedOf takes what the hosts have been asked for so far.
func askedOf(hosts []*peer.Host) []json.RawMessage {
	var asked []json.RawMessage
	for _, h := range hosts {
		for len(h.Asked) > 0 {
			asked = append(asked, <-h.Asked)
		}
	}
	return asked
}

// waitPeerLine waits for a line starting with prefix in the test
// upstream's log (MCPXFW_PEER_LOG) and returns the rest of it.
func waitPeerLine(t *testing.T, path, prefix string) string {
	t.Helper()
	var line string
	waitFor(t, "a line "+prefix+"… in the upstream's log", func() bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				line = rest
				return true
			}
		}
		return false
	})
	return line
}
