package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// pushGather is how long a bridge waits, after one push, for others that
// arrive together, so they share one round with the host.
const pushGather = 20 * time.Millisecond

// bridge is one call of a 2026-07-28 host to an upstream that pushes its
// sampling, elicitation or roots requests (revisions up to 2025-11-25),
// which such a host cannot receive.
// The call runs upstream on a session of its own, detached from the host's
// request; each push is suspended, handed to the host as an input request,
// and answered when the host retries (ARCHITECTURE.md, The path of one
// request).
//
// A push carries nothing that links it to its call, so a session serves
// one call and is then closed, never reused: an upstream may push after
// its call answered (a goroutine that outlived the call, a push written
// just before the result), and on a reused session such a push could not
// be told from the next call's, whose host (maybe another host) would be
// asked for it. Starting a session per call costs about 5 ms for a Go
// stdio server and 200 ms for a Node one (see bridgePool), and a server
// keeps no state from one bridged call to the next.
type bridge struct {
	id      string
	x       *exchange // the host's call, for a retry another replica hands over
	u       *upstream // the call's own upstream session
	slot    *bridgeSlot
	done    chan bridgeResult
	cancel  context.CancelFunc // ends the upstream call
	release func()             // gives the call's place under the limits back (closeSession)

	round  int
	parked map[string]*push // handed to the host, awaiting its retry
	timer  *time.Timer      // fails the parked pushes if no retry comes
}

// push is one suspended request of kind k and where its answer goes.
type push struct {
	ctx    context.Context // the push's own: done when the upstream cancels it
	k      *pipeline.Kind
	params mcp.InputRequest
	reply  chan pushReply
}

type pushReply struct {
	res mcp.InputResponse
	err error
}

type bridgeResult struct {
	res mcp.Result
	err error
}

// bridgeSlot takes the pushes of a bridged call's own session. It is open
// only while the call runs, from just before the call is sent until its
// result arrives or it is aborted; a push before or after that belongs to
// no call the firewall can name, and is refused. What was queued and not
// yet taken into a round when the call ends is refused too.
type bridgeSlot struct {
	mu    sync.Mutex
	state slotState
	queue []*push
	ready chan struct{} // holds a token when the queue may have grown
}

type slotState int

const (
	slotWaiting slotState = iota // the call is not sent yet
	slotOpen                     // the call runs
	slotOver                     // the call ended
)

func newBridgeSlot() *bridgeSlot { return &bridgeSlot{ready: make(chan struct{}, 1)} }

// open starts taking pushes: the call is about to be sent.
func (s *bridgeSlot) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == slotWaiting {
		s.state = slotOpen
	}
}

// offer queues ps for the running call; false when no call runs.
func (s *bridgeSlot) offer(ps *push) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != slotOpen {
		return false
	}
	s.queue = append(s.queue, ps)
	select {
	case s.ready <- struct{}{}:
	default:
	}
	return true
}

// take returns the pushes queued so far.
func (s *bridgeSlot) take() []*push {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// close stops taking pushes and returns the ones no round took.
func (s *bridgeSlot) close() []*push {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = slotOver
	q := s.queue
	s.queue = nil
	return q
}

// bridgeCall starts x on a session of its own, if the limits allow one
// more bridged call, and waits for its result or its first pushes.
func (p *Proxy) bridgeCall(ctx context.Context, x *exchange) (mcp.Result, error) {
	release, err := p.bridges.admit(x.u.cfg.Name, p.cfg.MaxBridgedPerServer, p.cfg.MaxBridged)
	if err != nil {
		x.u.log.Warn("bridged call refused", zap.Error(err))
		return nil, err
	}
	b := &bridge{id: randomID(), x: x, slot: newBridgeSlot(), done: make(chan bridgeResult, 1), release: release}
	l := newLink(hostView{era: x.host.era, caps: &mcp.ClientCapabilities{Sampling: x.host.caps.Sampling,
		Elicitation: x.host.caps.Elicitation, RootsV2: x.host.caps.RootsV2}})
	l.bridge = b.slot
	u, err := p.connectBridged(l, x.u.cfg)
	if err != nil {
		release()
		x.u.log.Error("bridged upstream failed to start", zap.Error(err))
		return nil, refusal.UpstreamDown(x.u.cfg.Name, time.Now(), startFailure(err))
	}
	b.u = u
	if !p.bridges.track(b) {
		release()
		u.close()
		return nil, refusal.ShuttingDown()
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.cancel = cancel
	b.slot.open()
	go func() {
		res, err := x.send(bctx, u.session, nil, "")
		b.done <- bridgeResult{res, err}
	}()
	return p.bridgeWait(ctx, x, b)
}

// bridgeWait waits for the upstream call's result, or for pushes to hand
// to the host. A host that goes away ends the upstream call.
func (p *Proxy) bridgeWait(ctx context.Context, x *exchange, b *bridge) (mcp.Result, error) {
	select {
	case r := <-b.done:
		return p.finishBridge(ctx, x, b, r)
	case <-b.slot.ready:
		return p.gather(ctx, x, b)
	case <-ctx.Done():
		p.abortBridge(b, refusal.Cancelled())
		return nil, ctx.Err()
	}
}

// gather waits pushGather for the pushes that arrive together with the
// first, so they share one round. A result that came meanwhile ends the
// call first: the upstream answered without waiting for those pushes.
func (p *Proxy) gather(ctx context.Context, x *exchange, b *bridge) (mcp.Result, error) {
	t := time.NewTimer(pushGather)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		p.abortBridge(b, refusal.Cancelled())
		return nil, ctx.Err()
	}
	select {
	case r := <-b.done:
		return p.finishBridge(ctx, x, b, r)
	default:
	}
	batch := b.slot.take()
	if len(batch) == 0 {
		return p.bridgeWait(ctx, x, b)
	}
	return p.bridgeRound(ctx, x, b, batch)
}

// bridgeRound puts a batch of pushes through the request stage and hands
// the cleared ones to the host. A refused push is answered at once (the
// upstream decides what to do with the refusal) and the wait goes on.
func (p *Proxy) bridgeRound(ctx context.Context, x *exchange, b *bridge, batch []*push) (mcp.Result, error) {
	if b.round++; b.round > p.cfg.MaxRounds {
		err := refusal.MaxRounds(x.u.cfg.Name, p.cfg.MaxRounds)
		for _, ps := range batch {
			ps.reply <- pushReply{err: err}
		}
		p.abortBridge(b, err)
		return nil, err
	}
	out, entries := mcp.InputRequestMap{}, map[string]pipeline.Entry{}
	b.parked = map[string]*push{}
	for i, ps := range batch {
		if ps.ctx.Err() != nil {
			continue // the upstream cancelled it while it waited
		}
		o := x.origin
		o.Round = b.round
		c, err := p.pushStage(ctx, x, b, o, ps)
		if err != nil {
			ps.reply <- pushReply{err: err}
			continue
		}
		p.editInSentOrder(c.Params, sentIn(ps.ctx))
		key := ps.k.KeyPrefix(b.round, i+1)
		out[key], entries[key], b.parked[key] = c.Params, c.Entry, ps
	}
	if len(out) == 0 {
		return p.bridgeWait(ctx, x, b)
	}
	return p.park(x, b, out, entries)
}

// pushStage runs a bridged push through the request stage while the push
// lasts (whilePush): a push its upstream cancels while its review is
// pending has that review abandoned, as a pushed request's is, and is
// never handed to the host.
func (p *Proxy) pushStage(ctx context.Context, x *exchange, b *bridge, o engine.Origin, ps *push) (*pipeline.Cleared, error) {
	ctx, cancel := whilePush(ctx, ps)
	defer cancel()
	return p.pipe.Decide(ctx, p.source(b.u, x.host, o), ps.k, ps.params)
}

// pushAnswer checks the host's answer to a parked push while the push
// lasts (whilePush); the answer to a push its upstream has cancelled is
// not checked at all: nobody is asked to review it.
func (p *Proxy) pushAnswer(ctx context.Context, x *exchange, key string, answers mcp.InputResponseMap, entries map[string]pipeline.Entry, ps *push) (mcp.InputResponse, error) {
	if ps.ctx.Err() != nil {
		return nil, refusal.Cancelled()
	}
	ctx, cancel := whilePush(ctx, ps)
	defer cancel()
	return p.checkAnswer(ctx, x, key, answers[key], entries)
}

// whilePush is ctx, ended also when the push ps ends (its upstream
// cancelled it, or its session closed): a bridged push is decided and
// reviewed on behalf of the host's call, and for as long as both last.
func whilePush(ctx context.Context, ps *push) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(ps.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// bridgeTTL is how long a parked bridged call waits for the host's retry:
// limits.bridge_wait, and never longer than a requestState lives.
func (p *Proxy) bridgeTTL() time.Duration { return min(p.cfg.BridgeWait, p.cfg.StateTTL) }

// park hands the round to the host under a sealed state naming the bridge,
// and fails the parked pushes if the host does not retry in time, or at
// once with the shutdown's error when the firewall is stopping.
func (p *Proxy) park(x *exchange, b *bridge, out mcp.InputRequestMap, entries map[string]pipeline.Entry) (mcp.Result, error) {
	ttl := p.bridgeTTL()
	cont := seal.Continuation{Server: x.u.cfg.Name, Call: x.digest, Keys: slices.Sorted(maps.Keys(out)),
		Round: b.round, Bridge: b.id, Replica: p.replica, Lease: p.holding(), Expires: time.Now().Add(ttl)}
	sealed, err := p.sealer.Seal(cont)
	if err != nil {
		p.abortBridge(b, refusal.Internal("requestState could not be sealed"))
		return nil, refusal.Internal("requestState could not be sealed")
	}
	parked := p.bridges.park(b, ttl, func() {
		if p.bridges.unpark(b.id) != nil {
			x.u.log.Warn("bridged call expired", zap.Duration("after", ttl))
			p.abortBridge(b, refusal.BridgeExpired(ttl))
		}
	})
	if !parked { // the firewall is stopping: no retry will be answered
		p.abortBridge(b, refusal.ShuttingDown())
		return nil, refusal.ShuttingDown()
	}
	p.handed.put(sealed, entries, cont.Expires)
	return inputRequired(x.origin.Method, out, sealed)
}

// resumeBridge answers the parked pushes of a bridged call with the host's
// checked completions and waits for the call's next step.
func (p *Proxy) resumeBridge(ctx context.Context, x *exchange, cont seal.Continuation, answers mcp.InputResponseMap, entries map[string]pipeline.Entry) (mcp.Result, error) {
	b := p.bridges.unpark(cont.Bridge)
	if b == nil {
		return nil, refusal.BridgeGone()
	}
	b.timer.Stop()
	for _, key := range cont.Keys {
		ps := b.parked[key]
		if ps == nil {
			continue
		}
		res, err := p.pushAnswer(ctx, x, key, answers, entries, ps)
		ps.reply <- pushReply{res: res, err: err}
	}
	b.parked = nil
	return p.bridgeWait(ctx, x, b)
}

// bridgePush is the handler of a bridged session's pushes, of every kind:
// it suspends the push in the session's call while that call runs, and
// refuses it otherwise.
func (p *Proxy) bridgePush(ctx context.Context, u *upstream, k *pipeline.Kind, params mcp.InputRequest) (mcp.InputResponse, error) {
	ps := &push{ctx: ctx, k: k, params: params, reply: make(chan pushReply, 1)}
	if !u.link.bridge.offer(ps) {
		return nil, p.noHostFor(u, k, "a push outside its bridged call")
	}
	select {
	case r := <-ps.reply:
		return r.res, r.err
	case <-ctx.Done():
		return nil, refusal.Cancelled()
	}
}

// finishBridge ends a call whose result came, and relays the result.
func (p *Proxy) finishBridge(ctx context.Context, x *exchange, b *bridge, r bridgeResult) (mcp.Result, error) {
	p.endBridge(b)
	if r.err != nil {
		return nil, p.callError(ctx, x, r.err)
	}
	return r.res, nil
}

// lateGrace is how long a bridged session stays open after its call
// ended, refusing pushes, before it is closed: the SDK handles a request
// concurrently with the responses read after it, so a push written just
// before the result may be handled just after it, and a push sent right
// after the result is the upstream's own mistake; either hears the
// firewall's refusal rather than a connection cut under it.
const lateGrace = time.Second

// endBridge ends a call whose result came: pushes it never took are
// refused, and its session is closed after lateGrace, which gives its
// place under the limits back.
func (p *Proxy) endBridge(b *bridge) {
	for _, ps := range b.slot.close() {
		ps.reply <- pushReply{err: p.noHostFor(b.u, ps.k, "a push its bridged call never took: the call had answered")}
	}
	time.AfterFunc(lateGrace, func() {
		b.cancel()
		p.bridges.closeSession(b)
	})
}

// abortGrace is how long an aborted bridged call may take to end on its
// own after its pushes are failed, so the upstream receives those
// answers before the call is cancelled under it.
const abortGrace = time.Second

// abortBridge fails what is parked or queued, ends the upstream call and
// closes its session, which gives its place under the limits back.
func (p *Proxy) abortBridge(b *bridge, why error) {
	queued := b.slot.close()
	failed := len(b.parked)+len(queued) > 0
	for _, ps := range b.parked {
		ps.reply <- pushReply{err: why}
	}
	b.parked = nil
	for _, ps := range queued {
		ps.reply <- pushReply{err: why}
	}
	go func() {
		if failed {
			select {
			case <-b.done:
			case <-time.After(abortGrace):
			}
		}
		b.cancel()
		p.bridges.closeSession(b)
	}()
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// bridged reports whether x must be bridged: a 2026-07-28 host that can
// answer a push (it declared sampling, elicitation or roots), calling an
// upstream that pushes.
func bridged(x *exchange) bool {
	return x.host.modern() && !x.u.modern() &&
		(x.host.canSample() || pipeline.Elicitation.Declared(x.host.caps) || pipeline.Roots.Declared(x.host.caps))
}
