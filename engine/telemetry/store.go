package telemetry

import (
	"context"
	"errors"
	"fmt"
)

// storeView is what the store holds that the metrics and status report:
// the pending reviews and every configured server's budget use. Err is
// the first read that failed; what was read before it is kept.
type storeView struct {
	Pending []Pending
	Usage   map[string]map[string]Usage // server, window
	Err     error
}

// errNoStore: the sources name no store to read.
var errNoStore = errors.New("no store configured")

// readStore reads the store within m's timeout: one query for the pending
// reviews, one per configured server for its usage. It stops at the first
// failure, so a dead store costs one timeout, not one per server.
func (m *Metrics) readStore(ctx context.Context) storeView {
	src := m.sources()
	if src.Pending == nil {
		return storeView{Err: errNoStore}
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	var v storeView
	if v.Pending, v.Err = src.Pending(ctx); v.Err != nil || src.Usage == nil {
		return v
	}
	v.Usage = make(map[string]map[string]Usage, len(m.names))
	for _, s := range m.names[:len(m.names)-1] { // Other has no budget of its own
		u, err := src.Usage(ctx, s)
		if err != nil {
			v.Err = fmt.Errorf("usage of %s: %w", s, err)
			return v
		}
		v.Usage[s] = u
	}
	return v
}

// pendingBy sums v's pending reviews by bounded server and stage, with the
// oldest of each: every configured server and stage is there, zero when
// none waits.
func (m *Metrics) pendingBy(v storeView) map[[2]string]Pending {
	out := make(map[[2]string]Pending, len(m.names)*len(stages))
	for _, s := range m.names {
		for _, st := range stages {
			out[[2]string{s, st}] = Pending{Server: s, Stage: st}
		}
	}
	for _, p := range v.Pending {
		key := [2]string{m.server(p.Server), stages[index(stages, p.Stage)]}
		agg := out[key]
		if agg.Count == 0 || p.Oldest.Before(agg.Oldest) {
			agg.Oldest = p.Oldest
		}
		agg.Count += p.Count
		out[key] = agg
	}
	return out
}
