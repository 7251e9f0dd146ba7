package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// connectModernHosts connects n 2026-07-28 hosts through the front and
// returns one load session per host and server, numbered after first. A
// 2026-07-28 host has no session: the front sends each of its requests,
// a call and its retry alike, to the next replica.
func connectModernHosts(t *testing.T, ctx context.Context, f *front, run *loadRun, n, first int) []*loadSession {
	t.Helper()
	var sessions []*loadSession
	for range n {
		h, err := peer.ConnectHTTP(ctx, f.URL(), peer.HostOptions{Answer: run.answer, Tools: true, ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatalf("connect a 2026-07-28 host through the front: %v", err)
		}
		t.Cleanup(func() { _ = h.Close() })
		if v := h.ProtocolVersion(); v != "2026-07-28" {
			t.Fatalf("a 2026-07-28 host negotiated %s", v)
		}
		for i := range 2 {
			sessions = append(sessions, &loadSession{index: first + len(sessions), host: h.Host, server: fmt.Sprintf("load%d", i)})
		}
	}
	return sessions
}

// roundModern sends per requests from every 2026-07-28 session at once,
// kinds in turn, each as its own call of the upstream's sample_input tool
// (the upstream asks for the completion as an input request; the
// firewall decides it and hands it to the host with a sealed
// requestState; the host's retry carries the answer), and records every
// outcome: the completion the upstream got back, or the error the host's
// call failed with.
func (r *loadRun) roundModern(t *testing.T, ctx context.Context, sessions []*loadSession, per int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, s := range sessions {
		for range per {
			r.mu.Lock()
			k := &loadKinds[s.next%len(loadKinds)]
			q := &loadRequest{id: fmt.Sprintf("ld-%d-%04d", s.index, s.next), kind: k}
			s.next++
			r.requests[q.id] = q
			r.mu.Unlock()
			wg.Go(func() {
				o, err := sampleInput(ctx, s, json.RawMessage(fmt.Sprintf(k.params, q.id)))
				if err != nil {
					t.Errorf("%s: %v", q.id, err)
					return
				}
				r.mu.Lock()
				defer r.mu.Unlock()
				q.got = append(q.got, o)
			})
		}
	}
	wg.Wait()
}

// sampleInput calls s's sample_input with params and reads what the
// upstream got, or the JSON-RPC error the call failed with.
func sampleInput(ctx context.Context, s *loadSession, params json.RawMessage) (peer.SampleOutcome, error) {
	res, err := s.host.CallTool(ctx, s.server+"__sample_input", map[string]any{"params": params})
	var pe *peer.Error
	if errors.As(err, &pe) {
		return peer.SampleOutcome{Error: pe}, nil
	}
	if err != nil {
		return peer.SampleOutcome{}, err
	}
	var got peer.InputOutcome
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil || len(got.Completions) != 1 || res.IsError {
		return peer.SampleOutcome{}, fmt.Errorf("sample_input: %.300s (%v)", res.Text, err)
	}
	return peer.SampleOutcome{Completion: got.Completions[0]}, nil
}
