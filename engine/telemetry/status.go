package telemetry

import (
	"context"
	"sort"
	"time"
)

// Status is what `mcpx-fw status` prints, served as JSON at /status. Its
// strings come from the config, the operator's policy files and store,
// and mcpx-fw's own words: never from an upstream.
type Status struct {
	Ready       bool            `json:"ready"`
	Checks      []Check         `json:"checks,omitempty"`
	Policy      *Policy         `json:"policy,omitempty"`
	Shadow      *Shadow         `json:"shadow,omitempty"`
	Upstreams   []Upstream      `json:"upstreams,omitempty"`
	Reviews     []PendingStatus `json:"reviews"`
	Budgets     []BudgetStatus  `json:"budgets"`
	DecisionLog []LogSink       `json:"decision_log,omitempty"`
	Replay      *Replay         `json:"replay,omitempty"`
	Store       StoreStatus     `json:"store"`
	// Restricted is set, and nothing but Ready, when the listener wants a
	// token the request did not bring (Public access).
	Restricted string `json:"restricted,omitempty"`
}

// Replay is what serve keeps for `mcpx-fw policy replay`: each
// decision's policy input for KeepSeconds, within MaxBytes; and, since it
// started, how many decisions' inputs it did not keep (a full queue, a
// failed write) and how many kept ones it deleted past MaxBytes.
type Replay struct {
	KeepSeconds float64 `json:"keep_seconds"`
	MaxBytes    int64   `json:"max_bytes"`
	Dropped     uint64  `json:"dropped"`
	Trimmed     uint64  `json:"trimmed"`
}

// PendingStatus is the pending reviews of one server and stage.
type PendingStatus struct {
	Server           string  `json:"server"`
	Stage            string  `json:"stage"`
	Count            int64   `json:"count"`
	OldestAgeSeconds float64 `json:"oldest_age_seconds"`
}

// BudgetStatus is one server's use in one window.
type BudgetStatus struct {
	Server string `json:"server"`
	Window string `json:"window"`
	Usage
}

// StoreStatus is the store's backend and whether it answered.
type StoreStatus struct {
	Backend  string `json:"backend"`
	Writable *bool  `json:"writable,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Status reports everything a running serve knows: readiness, the policy,
// the upstreams, the store's queue and budgets, the decision log.
func (m *Metrics) Status(ctx context.Context) Status {
	st := m.StoreStatus(ctx)
	src := m.sources()
	st.Checks = m.Readiness(ctx)
	st.Ready = Ready(st.Checks)
	if src.Policy != nil {
		p := src.Policy()
		st.Policy = &p
	}
	if src.Shadow != nil {
		sh := src.Shadow()
		st.Shadow = &sh
	}
	st.Upstreams = m.Upstreams()
	if src.DecisionLog != nil {
		st.DecisionLog = src.DecisionLog()
	}
	if src.Replay != nil {
		r := src.Replay()
		st.Replay = &r
	}
	for _, c := range st.Checks {
		if c.Name == "store" {
			ok := c.OK
			st.Store.Writable = &ok
			if !ok {
				st.Store.Error = c.Error
			}
		}
	}
	return st
}

// StoreStatus is the part of Status the store alone knows: what `mcpx-fw
// status` prints when no serve answers.
func (m *Metrics) StoreStatus(ctx context.Context) Status {
	v := m.readStore(ctx)
	st := Status{Reviews: []PendingStatus{}, Budgets: []BudgetStatus{}, Store: StoreStatus{Backend: m.sources().Backend}}
	if v.Err != nil {
		st.Store.Error = v.Err.Error()
	}
	now := time.Now()
	for _, p := range m.pendingBy(v) {
		if p.Count > 0 {
			st.Reviews = append(st.Reviews, PendingStatus{Server: p.Server, Stage: p.Stage, Count: p.Count,
				OldestAgeSeconds: max(now.Sub(p.Oldest).Seconds(), 0)})
		}
	}
	sort.Slice(st.Reviews, func(i, j int) bool {
		a, b := st.Reviews[i], st.Reviews[j]
		return a.Server < b.Server || a.Server == b.Server && a.Stage < b.Stage
	})
	for _, s := range m.names {
		for _, w := range m.windows {
			if u, ok := v.Usage[s][w]; ok {
				st.Budgets = append(st.Budgets, BudgetStatus{Server: s, Window: w, Usage: u})
			}
		}
	}
	return st
}
