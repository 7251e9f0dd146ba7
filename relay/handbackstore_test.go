package relay

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// TestStoredRoundAfterClose: a round whose request was still in the
// request stage when the firewall began to stop (its review decided
// during the drain) is handed out after closeAll. Its row stays in the
// store for another replica, but nothing here keeps it: its admission is
// given back at once, or the drain would wait for it, in vain, until the
// state expired, and no poll of the store outlives the Proxy.
func TestStoredRoundAfterClose(t *testing.T) {
	p := newTestProxy(t, "alpha")
	held, werr := p.admit.Acquire("alpha", "host", admit.Claim{InFlight: 1, Bytes: 100})
	if werr != nil {
		t.Fatal(werr)
	}
	p.handed.closeAll()
	cont := seal.Continuation{Server: "alpha", Call: "call", Keys: []string{"k"}, Expires: time.Now().Add(time.Hour)}
	state, cont, err := p.sealer.Sealed(cont)
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]pipeline.Entry{"k": {Kind: pipeline.Sampling, Request: engine.Request{Kind: engine.KindSampling, Params: []byte(helloParams)}}}
	if err := p.putStored(t.Context(), state, cont, entries, held); err != nil {
		t.Fatal(err)
	}
	if got := p.admit.Held("alpha"); got != (admit.Claim{}) {
		t.Errorf("held after a round kept past closeAll: %+v, want nothing", got)
	}
	p.handed.mu.Lock()
	polling, kept := p.handed.polling, len(p.handed.rounds)
	p.handed.mu.Unlock()
	if polling || kept != 0 {
		t.Errorf("after closeAll: polling %v, %d rounds kept; want no poll and none", polling, kept)
	}
	rows, err := p.store.HeldContinuations(t.Context(), []string{cont.Nonce})
	if err != nil || !rows[cont.Nonce] {
		t.Errorf("the round's row: %v %v, want it left for another replica", rows, err)
	}
}

// TestStoredRoundPollStoreDown: while the store cannot be read, the poll
// of stored rounds says so once, not at every interval (four times a
// second on SQLite) for as long as the outage lasts, and says when it
// reads again.
func TestStoredRoundPollStoreDown(t *testing.T) {
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	store.PollInterval = 250 * time.Millisecond
	store.Close() // every read fails from now on
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.DebugLevel)
		p := &Proxy{store: store, log: zap.New(core)}
		p.handed.keep("state", &handedRound{nonce: "n"}, time.Now().Add(time.Hour))
		p.handed.startPoll(p)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := logs.FilterMessageSnippet("stored rounds not polled").Len(); n != 1 {
			t.Errorf("%d warnings in a minute of outage, want 1", n)
		}
		p.handed.closeAll()
		time.Sleep(time.Second) // the poll finds no round and stops
	})
}

// TestStoredRoundAdmissionBytes: however a stored round ends (resumed
// here or on the other replica, its answer refused, replayed, expired,
// or its take failing because the store is gone), neither replica counts
// any of its requests or bytes in flight afterwards.
func TestStoredRoundAdmissionBytes(t *testing.T) {
	bad := &mcp.CreateMessageWithToolsResult{Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		end  func(t *testing.T, p1 *Proxy, host1, host2 *mcp.ClientSession, key, state string)
	}{
		{"resumed here", time.Hour, func(t *testing.T, _ *Proxy, host1, _ *mcp.ClientSession, key, state string) {
			if _, err := retry(t.Context(), host1, "alpha__sample_input", key, state); err != nil {
				t.Fatal(err)
			}
		}},
		{"resumed there", time.Hour, func(t *testing.T, _ *Proxy, _, host2 *mcp.ClientSession, key, state string) {
			if _, err := retry(t.Context(), host2, "alpha__sample_input", key, state); err != nil {
				t.Fatal(err)
			}
		}},
		{"answer refused there", time.Hour, func(t *testing.T, _ *Proxy, _, host2 *mcp.ClientSession, key, state string) {
			_, err := host2.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sample_input", Arguments: map[string]any{"params": json.RawMessage(helloParams)},
				RequestState: state, InputResponses: mcp.InputResponseMap{key: bad}})
			if err == nil {
				t.Fatal("an answer without a model passed")
			}
		}},
		{"replayed here after there", time.Hour, func(t *testing.T, _ *Proxy, host1, host2 *mcp.ClientSession, key, state string) {
			if _, err := retry(t.Context(), host2, "alpha__sample_input", key, state); err != nil {
				t.Fatal(err)
			}
			_, err := retry(t.Context(), host1, "alpha__sample_input", key, state)
			wantRejected(t, err, "already used")
		}},
		{"expired", 200 * time.Millisecond, func(*testing.T, *Proxy, *mcp.ClientSession, *mcp.ClientSession, string, string) {}},
		{"store gone at the take", time.Hour, func(t *testing.T, p1 *Proxy, host1, _ *mcp.ClientSession, key, state string) {
			p1.store.Close()
			if _, err := retry(t.Context(), host1, "alpha__sample_input", key, state); err == nil {
				t.Fatal("a round was taken from a closed store")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p1, p2 := replicaPair(t, "alpha", "beta")
			p1.store.PollInterval = 10 * time.Millisecond
			p1.cfg.StateTTL = tc.ttl
			host1, host2 := manualHost(t, p1), manualHost(t, p2)
			first := askInput(t, host1, "alpha__sample_input")
			if got := p1.admit.Held("alpha"); got.InFlight != 1 || got.Bytes == 0 {
				t.Fatalf("held while the host holds the round: %+v, want one request and its bytes", got)
			}
			tc.end(t, p1, host1, host2, keyOf(first.InputRequests), first.RequestState)
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				h1, h2 := p1.admit.Held("alpha"), p2.admit.Held("alpha")
				if h1 == (admit.Claim{}) && h2 == (admit.Claim{}) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("still held: %+v here, %+v on the other replica", h1, h2)
				}
			}
		})
	}
}

// TestStoredRoundRetriesRace: one state retried at once on both replicas,
// several times each, is resumed exactly once; every other retry is
// refused as used, and nothing stays in flight.
func TestStoredRoundRetriesRace(t *testing.T) {
	p1, p2 := replicaPair(t, "alpha", "beta")
	p1.store.PollInterval = 10 * time.Millisecond
	hosts := []*mcp.ClientSession{manualHost(t, p1), manualHost(t, p2)}
	first := askInput(t, hosts[0], "alpha__sample_input")
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = retry(t.Context(), hosts[i%2], "alpha__sample_input", keyOf(first.InputRequests), first.RequestState)
		})
	}
	wg.Wait()
	resumed := 0
	for _, err := range errs {
		if err == nil {
			resumed++
			continue
		}
		wantRejected(t, err, "already used")
	}
	if resumed != 1 {
		t.Fatalf("resumed %d times, want once", resumed)
	}
	for deadline := time.Now().Add(10 * time.Second); p1.admit.Held("alpha") != (admit.Claim{}) || p2.admit.Held("alpha") != (admit.Claim{}); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still held: %+v, %+v", p1.admit.Held("alpha"), p2.admit.Held("alpha"))
		}
	}
}

// TestStoredRoundPollInterval: the poll of stored rounds runs four times
// a second even where the review store's own PollInterval is long (2s on
// PostgreSQL, whose waiters are woken by notifications): nothing announces
// a take, so a round another replica resumed would otherwise count here
// for up to that long.
func TestStoredRoundPollInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, err := review.Open(filepath.Join(t.TempDir(), "state"), zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		store.PollInterval = review.DefaultListenPollInterval
		p := &Proxy{store: store, log: zap.NewNop(), admit: admit.New(Limits{}, zap.NewNop(), nil)}
		held, werr := p.admit.Acquire("alpha", "host", admit.Claim{InFlight: 1, Bytes: 100})
		if werr != nil {
			t.Fatal(werr)
		}
		// The round's row is gone already: taken by another replica.
		p.handed.keep("state", &handedRound{nonce: "n", hold: held}, time.Now().Add(time.Hour))
		p.handed.startPoll(p)
		time.Sleep(review.DefaultPollInterval)
		synctest.Wait()
		if got := p.admit.Held("alpha"); got != (admit.Claim{}) {
			t.Errorf("held %v after the other replica's take, want the round given back", review.DefaultPollInterval)
		}
		p.handed.closeAll()
		time.Sleep(time.Hour) // the poll finds no round and stops
	})
}
