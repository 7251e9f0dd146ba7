package relay

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// TestBridgedPlaceHeldUntilItsProcessEnds: a hostile upstream whose
// bridged calls answer at once but whose processes stay on after their
// sessions close (deaf to the end of their input and to SIGTERM) cannot
// make the firewall run more of its processes than
// limits.max_bridged_calls_per_server: a call's place is given back only
// once its process has gone, and the call after it is refused until then.
func TestBridgedPlaceHeldUntilItsProcessEnds(t *testing.T) {
	p, _ := bridgedProxy(t)
	p.cfg.MaxBridgedPerServer = 1
	host := manualHost(t, p)
	if _, err := host.ListTools(t.Context(), nil); err != nil { // the host's own upstream is running
		t.Fatal(err)
	}
	base := upstreamProcesses(t)
	linger := &mcp.CallToolParams{Name: "linger", Arguments: map[string]any{"ms": 4000}}
	if res, err := host.CallTool(t.Context(), linger); err != nil || res.IsError {
		t.Fatalf("first call: %v %v", res, err)
	}
	refused := 0
	for range 3 {
		_, err := host.CallTool(t.Context(), linger)
		var we *jsonrpc.Error
		switch {
		case err == nil:
		case errors.As(err, &we) && strings.Contains(we.Message, "limits.max_bridged_calls_per_server"):
			refused++
		default:
			t.Fatalf("call: %v", err)
		}
		if n := upstreamProcesses(t) - base; n > 1 {
			t.Fatalf("%d bridged processes of one server run, over limits.max_bridged_calls_per_server (1)", n)
		}
	}
	if refused != 3 {
		t.Errorf("%d of 3 calls refused while the first call's process still ran, want 3", refused)
	}
	waitFor(t, func() bool { return upstreamProcesses(t) == base && p.bridges.sessions() == 0 })
	waitFor(t, func() bool { // its place is free again once its process has gone
		res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		return err == nil && !res.IsError
	})
}

// handMadeBridge is a bridged call of p's first server, running (its
// session tracked) with one push of round 1 cleared and about to be
// parked. It has no process: its call has already answered (done is
// full), so aborting it waits for nothing.
func handMadeBridge(p *Proxy) (*bridge, *push) {
	_, cancel := context.WithCancel(context.Background())
	b := &bridge{id: randomID(), u: &upstream{cfg: p.cfg.Upstreams[0], log: zap.NewNop()}, slot: newBridgeSlot(),
		done: make(chan bridgeResult, 1), cancel: cancel, release: func() {}, round: 1}
	b.done <- bridgeResult{}
	ps := &push{ctx: context.Background(), k: pipeline.Sampling, reply: make(chan pushReply, 1)}
	b.parked = map[string]*push{"s1": ps}
	return b, ps
}

// parkOne parks b's round as bridgeRound does once its push is cleared.
func parkOne(p *Proxy, b *bridge) (mcp.Result, error) {
	x := &exchange{u: b.u, origin: engine.Origin{Method: "tools/call"}, digest: "call"}
	out := mcp.InputRequestMap{"s1": &mcp.CreateMessageWithToolsParams{MaxTokens: 10}}
	return p.park(x, b, out, map[string]pipeline.Entry{"s1": {Kind: pipeline.Sampling}})
}

// TestNoParkAfterShutdown: a bridged call whose round is cleared after
// the firewall began to stop (closeAll) is not parked for a retry nobody
// will answer: its push and the host both get the shutdown's error at
// once, and nothing stays parked.
func TestNoParkAfterShutdown(t *testing.T) {
	p := newTestProxy(t, "peer")
	b, ps := handMadeBridge(p)
	if !p.bridges.track(b) {
		t.Fatal("the pool refused a session before shutdown")
	}
	p.bridges.closeAll(p)
	res, err := parkOne(p, b)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(string(we.Data), refusal.ReasonShuttingDown) {
		t.Errorf("the host got %v, %v; want the shutdown's error", res, err)
	}
	select {
	case r := <-ps.reply:
		if !errors.As(r.err, &we) || !strings.Contains(string(we.Data), refusal.ReasonShuttingDown) {
			t.Errorf("the push got %v, want the shutdown's error", r.err)
		}
	default:
		t.Error("the push got no answer")
	}
	if b := p.bridges.unpark(b.id); b != nil {
		t.Error("the bridge was parked after shutdown")
	}
}

// TestParkRacesShutdown: bridges parked while closeAll runs are each
// either refused (the shutdown's error to the host) or parked and then
// aborted by closeAll, their expiry stopped; never parked without an
// expiry, never left parked. Run it with -race: the expiry timer is
// written under the pool's lock, before anything can take the bridge.
func TestParkRacesShutdown(t *testing.T) {
	for range 20 {
		p := newTestProxy(t, "peer")
		p.cfg.StateTTL = time.Hour
		var wg sync.WaitGroup
		pushes := make([]*push, 8)
		for i := range pushes {
			b, ps := handMadeBridge(p)
			p.bridges.track(b)
			pushes[i] = ps
			wg.Go(func() { _, _ = parkOne(p, b) })
		}
		wg.Go(func() { p.bridges.closeAll(p) })
		wg.Wait()
		for i, ps := range pushes {
			select {
			case r := <-ps.reply:
				var we *jsonrpc.Error
				if !errors.As(r.err, &we) || !strings.Contains(string(we.Data), refusal.ReasonShuttingDown) {
					t.Fatalf("push %d got %v, want the shutdown's error", i, r.err)
				}
			default:
				t.Fatalf("push %d got no answer: parked after shutdown", i)
			}
		}
	}
}
