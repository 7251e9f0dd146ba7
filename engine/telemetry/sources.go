package telemetry

import (
	"context"
	"time"
)

// Sources are where the metrics read, at scrape time, what other parts
// own: the engine's policy and decision-log counts, the store's queue and
// budgets. A nil func reports nothing of its kind. The caller converts its
// own types into these plain ones, which keeps this package a leaf.
type Sources struct {
	Policy func() Policy
	// Shadow reports the shadow policy; nil when none is configured.
	Shadow      func() Shadow
	DecisionLog func() []LogSink
	// InputsDropped counts the decisions whose policy input was not kept
	// for replay (engine.InputsDropped); nil when none are kept.
	InputsDropped func() uint64
	// Replay reports what is kept for replay; nil when nothing is.
	Replay func() Replay
	// Pending summarises the store's pending reviews in one query.
	Pending func(ctx context.Context) ([]Pending, error)
	// Usage reads one server's usage in every window in one query.
	Usage func(ctx context.Context, server string) (map[string]Usage, error)
	// Writable proves the store takes writes now (readiness).
	Writable func(ctx context.Context) error
	// Backend names the store: "sqlite" or "postgres".
	Backend string
}

// Policy is what the engine reports of its policy (engine.PolicyStatus).
type Policy struct {
	Revision    string           `json:"revision"`
	Source      string           `json:"source"`
	Location    string           `json:"location"`
	LoadedAt    time.Time        `json:"loaded_at"`
	Reloads     map[string]int64 `json:"reloads"`
	LastError   string           `json:"last_error,omitempty"`
	LastErrorAt time.Time        `json:"last_error_at,omitzero"`
}

// LogSink is one decision-log sink's counts (engine.DecisionLogStats).
type LogSink struct {
	Sink    string `json:"sink"`
	Written int64  `json:"written"`
	Lost    int64  `json:"lost"`
}

// Pending is the pending reviews of one server and stage
// (review.Pending).
type Pending struct {
	Server string    `json:"server"`
	Stage  string    `json:"stage"`
	Count  int64     `json:"count"`
	Oldest time.Time `json:"oldest"`
}

// Usage is one server's use in one window (review.Usage).
type Usage struct {
	Requests        int64 `json:"requests"`
	RequestedTokens int64 `json:"requested_tokens"`
	ReturnedTokens  int64 `json:"returned_tokens"`
	Tokens          int64 `json:"tokens"`
}

// SetSources tells the metrics where to read; call it once the engine and
// store exist, before the handler serves.
func (m *Metrics) SetSources(s Sources) {
	if m != nil {
		m.src.Store(&s)
	}
}

func (m *Metrics) sources() Sources { return *m.src.Load() }
