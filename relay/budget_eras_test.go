package relay

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// hourOf is server's usage in the last hour, read from p's store.
func hourOf(t *testing.T, p *Proxy, server string) review.Usage {
	t.Helper()
	u, err := p.store.UsageIn(t.Context(), server, engine.DefaultUsageWindows, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u["hour"]
}

// TestBudgetOneChargeInEveryEra: a sampling request charges its server
// once, whichever era carries it (a push behind a legacy host, an input
// request answered by pushes, one handed back to a 2026-07-28 host, a push
// bridged to one): its prompt's estimate and what the model returned,
// the completion settling what the request reserved. An approved edit
// that grows the request is what is charged: its prompt and its
// completion, never the completion less a maxTokens nobody reserved.
func TestBudgetOneChargeInEveryEra(t *testing.T) {
	const edited = `{"messages":[{"role":"user","content":{"type":"text","text":"what is the admin password? Explain each step."}}],"maxTokens":20}`
	cells := []struct{ name, host, protocol, tool string }{
		{"legacy-upstream/legacy-host", "2025-11-25", "legacy", "sample"},
		{"2026-upstream/legacy-host", "2025-11-25", modernEra, "sample_input"},
		{"2026-upstream/2026-host", modernEra, "", "sample_input"},
		{"legacy-upstream/2026-host", modernEra, "legacy", "sample"},
	}
	cases := []struct {
		name, params, edit string
		want               review.Usage
	}{
		// "hello": 2 tokens to read; "hi": 1 written.
		{"let through", helloParams, "", review.Usage{Requests: 1, RequestedTokens: 10, ReturnedTokens: 1, Tokens: 2 + 1}},
		// The edit's text is 12 tokens to read.
		{"approved with an edit", `{"messages":[{"role":"user","content":{"type":"text","text":"what is the admin password?"}}],"maxTokens":1}`,
			edited, review.Usage{Requests: 1, RequestedTokens: 20, ReturnedTokens: 1, Tokens: 12 + 1}},
	}
	for _, cell := range cells {
		for _, tc := range cases {
			t.Run(cell.name+"/"+tc.name, func(t *testing.T) {
				p := newTestProxy(t, "peer")
				p.cfg.Upstreams[0].Era = cell.protocol
				var asked atomic.Int32
				host := connectHost(t, p, cell.host, samplingHost(&asked))
				if tc.edit != "" {
					go func() {
						_, err := p.store.ApproveEdited(context.Background(), pendingID(t, p.store), "alice", "", review.Edit{Value: json.RawMessage(tc.edit)})
						if err != nil {
							t.Error(err)
						}
					}()
				}
				if _, code := sampleThrough(t, host, cell.tool, tc.params); code != 0 || asked.Load() != 1 {
					t.Fatalf("code %d, host asked %d times; want an answer from one completion", code, asked.Load())
				}
				if got := hourOf(t, p, "peer"); got != tc.want {
					t.Errorf("hour usage %+v, want %+v", got, tc.want)
				}
			})
		}
	}
}

// TestBudgetOneChargeAcrossReplicas: a round handed to a 2026-07-28 host
// by one replica and resumed by another is charged once, on the shared
// store: the second replica's result stage settles what the first
// replica's request stage reserved, and a replay of the state on the
// first charges nothing more.
func TestBudgetOneChargeAcrossReplicas(t *testing.T) {
	p1, p2 := replicaPair(t, "alpha")
	host1, host2 := manualHost(t, p1), manualHost(t, p2)
	first := askInput(t, host1, "sample_input")
	if got := hourOf(t, p2, "alpha"); got != (review.Usage{Requests: 1, RequestedTokens: 10, Tokens: 2 + 10}) {
		t.Fatalf("handed out: %+v, want the request reserving its prompt and maxTokens", got)
	}
	key := keyOf(first.InputRequests)
	if _, err := retry(t.Context(), host2, "sample_input", key, first.RequestState); err != nil {
		t.Fatalf("retry on the other replica: %v", err)
	}
	_, err := retry(t.Context(), host1, "sample_input", key, first.RequestState)
	wantRejected(t, err, "already used")
	if got := hourOf(t, p1, "alpha"); got != (review.Usage{Requests: 1, RequestedTokens: 10, ReturnedTokens: 1, Tokens: 2 + 1}) {
		t.Errorf("settled: %+v, want the prompt and the one token written", got)
	}
}
