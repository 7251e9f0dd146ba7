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

// kindNamed is the load kind of that name.
func kindNamed(t testing.TB, name string) *loadKind {
	t.Helper()
	for i := range loadKinds {
		if loadKinds[i].name == name {
			return &loadKinds[i]
		}
	}
	t.Fatalf("no load kind %q", name)
	return nil
}

// send pushes one request of each of kinds from every session at once, as
// round does, and returns them once every one is answered. A session's
// call that fails is reported and its requests keep no outcome.
func (r *loadRun) send(t *testing.T, ctx context.Context, sessions []*loadSession, kinds []*loadKind) []*loadRequest {
	t.Helper()
	reqs, err := r.trySend(ctx, sessions, kinds)
	if err != nil {
		t.Error(err)
	}
	return reqs
}

// trySend is send for sessions that may fail (their replica killed): it
// returns what failed instead of reporting it.
func (r *loadRun) trySend(ctx context.Context, sessions []*loadSession, kinds []*loadKind) ([]*loadRequest, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	var all []*loadRequest
	for _, s := range sessions {
		batch := make([]json.RawMessage, len(kinds))
		reqs := make([]*loadRequest, len(kinds))
		r.mu.Lock()
		for i, k := range kinds {
			id := fmt.Sprintf("ld-%d-%04d", s.index, s.next)
			s.next++
			batch[i] = json.RawMessage(fmt.Sprintf(k.params, id))
			reqs[i] = &loadRequest{id: id, kind: k}
			r.requests[id] = reqs[i]
		}
		r.mu.Unlock()
		all = append(all, reqs...)
		wg.Go(func() {
			res, err := s.host.CallTool(ctx, s.server+"__sample_each", map[string]any{"requests": batch})
			if err != nil {
				fail(fmt.Errorf("session %d: sample_each: %w", s.index, err))
				return
			}
			var out peer.LoadOutcomes
			if err := json.Unmarshal([]byte(res.Text), &out); err != nil || len(out.Outcomes) != len(reqs) {
				fail(fmt.Errorf("session %d: sample_each gave %d outcomes for %d requests (%v): %.300s", s.index, len(out.Outcomes), len(reqs), err, res.Text))
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			for i, o := range out.Outcomes {
				reqs[i].got = append(reqs[i].got, o)
			}
		})
	}
	wg.Wait()
	return all, errors.Join(errs...)
}

// outcome is a request's one outcome, or nil if it has not exactly one.
func (r *loadRun) outcome(q *loadRequest) *peer.SampleOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(q.got) != 1 {
		return nil
	}
	return &q.got[0]
}
