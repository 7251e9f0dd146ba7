package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// pushGather is how long a bridge waits, after one push, for others that
// arrive together, so they share one round with the host.
const pushGather = 20 * time.Millisecond

// bridge is one call of a 2026-07-28 host to an upstream that pushes its
// sampling (revisions up to 2025-11-25), which such a host cannot receive.
// The call runs upstream on its own session, detached from the host's
// request; each push is suspended, handed to the host as an input request,
// and answered when the host retries (SPEC-NOTES §8). A push carries
// nothing that links it to its call, hence a session per bridged call.
type bridge struct {
	id     string
	u      *upstream // the call's own upstream session
	pushes chan *push
	done   chan bridgeResult
	cancel context.CancelFunc // ends the upstream call

	round  int
	parked map[string]*push // handed to the host, awaiting its retry
	timer  *time.Timer      // fails the parked pushes if no retry comes
}

// push is one suspended sampling request and where its answer goes.
type push struct {
	params *mcp.CreateMessageWithToolsParams
	reply  chan pushReply
}

type pushReply struct {
	res *mcp.CreateMessageWithToolsResult
	err error
}

type bridgeResult struct {
	res mcp.Result
	err error
}

// bridgeSlot is where a bridged upstream session's pushes go: the bridge
// of the call now running on it, or none between calls.
type bridgeSlot struct {
	mu sync.Mutex
	b  *bridge
}

func (s *bridgeSlot) set(b *bridge) {
	s.mu.Lock()
	s.b = b
	s.mu.Unlock()
}

func (s *bridgeSlot) current() *bridge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b
}

// bridgeCall starts x on a session of its own and waits for its result or
// its first pushes.
func (p *Proxy) bridgeCall(ctx context.Context, x *exchange) (mcp.Result, error) {
	u, err := p.bridges.get(ctx, p, x.u.cfg, x.host)
	if err != nil {
		return nil, err
	}
	b := &bridge{id: randomID(), u: u, pushes: make(chan *push, 64), done: make(chan bridgeResult, 1)}
	u.slot.set(b)
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.cancel = cancel
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
		p.endBridge(b, r.err == nil)
		if r.err != nil {
			return nil, upstreamError(x.u, r.err)
		}
		return r.res, nil
	case first := <-b.pushes:
		return p.bridgeRound(ctx, x, b, together(first, b.pushes))
	case <-ctx.Done():
		p.abortBridge(b, errCancelled())
		return nil, ctx.Err()
	}
}

// together collects the pushes that arrive together with first.
func together(first *push, more <-chan *push) []*push {
	batch := []*push{first}
	t := time.NewTimer(pushGather)
	defer t.Stop()
	for {
		select {
		case ps := <-more:
			batch = append(batch, ps)
		case <-t.C:
			return batch
		}
	}
}

// bridgeRound puts a batch of pushes through the request stage and hands
// the cleared ones to the host. A refused push is answered at once (the
// upstream decides what to do with the refusal) and the wait goes on.
func (p *Proxy) bridgeRound(ctx context.Context, x *exchange, b *bridge, batch []*push) (mcp.Result, error) {
	if b.round++; b.round > p.cfg.MaxRounds {
		err := errMaxRounds(x.u.cfg.Name, p.cfg.MaxRounds)
		for _, ps := range batch {
			ps.reply <- pushReply{err: err}
		}
		p.abortBridge(b, err)
		return nil, err
	}
	out, entries := mcp.InputRequestMap{}, map[string]handed{}
	b.parked = map[string]*push{}
	for i, ps := range batch {
		o := x.origin
		o.Round = b.round
		c, err := p.requestStage(ctx, b.u, x.host, o, ps.params)
		if err != nil {
			ps.reply <- pushReply{err: err}
			continue
		}
		key := fmt.Sprintf("sampling-%d-%d", b.round, i+1)
		out[key], entries[key], b.parked[key] = c.params, handed{s: c.s, reviewID: c.reviewID}, ps
	}
	if len(out) == 0 {
		return p.bridgeWait(ctx, x, b)
	}
	return p.park(x, b, out, entries)
}

// park hands the round to the host under a sealed state naming the bridge,
// and fails the parked pushes if the host does not retry in time.
func (p *Proxy) park(x *exchange, b *bridge, out mcp.InputRequestMap, entries map[string]handed) (mcp.Result, error) {
	cont := continuation{Server: x.u.cfg.Name, Call: x.digest, Keys: slices.Sorted(maps.Keys(out)),
		Round: b.round, Bridge: b.id, Expires: time.Now().Add(p.cfg.StateTTL)}
	sealed, err := p.sealer.seal(cont)
	if err != nil {
		p.abortBridge(b, errInternal("requestState could not be sealed"))
		return nil, errInternal("requestState could not be sealed")
	}
	p.handed.put(sealed, entries, cont.Expires)
	p.bridges.park(b)
	ttl := p.cfg.StateTTL
	b.timer = time.AfterFunc(ttl, func() {
		if p.bridges.unpark(b.id) != nil {
			p.log.Warn("bridged call expired", zap.String("server", x.u.cfg.Name), zap.Duration("after", ttl))
			p.abortBridge(b, errBridgeExpired(ttl))
		}
	})
	return inputRequired(x.origin.Method, out, sealed)
}

// resumeBridge answers the parked pushes of a bridged call with the host's
// checked completions and waits for the call's next step.
func (p *Proxy) resumeBridge(ctx context.Context, x *exchange, cont continuation, answers mcp.InputResponseMap, entries map[string]handed) (mcp.Result, error) {
	b := p.bridges.unpark(cont.Bridge)
	if b == nil {
		return nil, errBridgeGone()
	}
	b.timer.Stop()
	for _, key := range cont.Keys {
		ps := b.parked[key]
		if ps == nil {
			continue
		}
		res, err := p.checkAnswer(ctx, x, key, answers[key], entries)
		r := pushReply{err: err}
		if err == nil {
			r.res, _ = res.(*mcp.CreateMessageWithToolsResult)
		}
		ps.reply <- r
	}
	b.parked = nil
	return p.bridgeWait(ctx, x, b)
}

// bridgePush is the sampling handler of a bridged session: it suspends the
// push in the bridge of the call now running, if any.
func (p *Proxy) bridgePush(ctx context.Context, u *upstream, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	b := u.slot.current()
	if b == nil {
		return nil, p.noHost(u, "a push outside the bridged call")
	}
	ps := &push{params: params, reply: make(chan pushReply, 1)}
	select {
	case b.pushes <- ps:
	case <-ctx.Done():
		return nil, errCancelled()
	}
	select {
	case r := <-ps.reply:
		return r.res, r.err
	case <-ctx.Done():
		return nil, errCancelled()
	}
}

// abortGrace is how long an aborted bridged call may take to end on its
// own after its parked pushes are failed, so the upstream receives those
// answers before the call is cancelled under it.
const abortGrace = time.Second

// abortBridge fails what is parked, ends the upstream call and closes its
// session, which is never reused after a call that did not finish.
func (p *Proxy) abortBridge(b *bridge, why error) {
	failed := len(b.parked) > 0
	for _, ps := range b.parked {
		ps.reply <- pushReply{err: why}
	}
	b.parked = nil
	b.u.slot.set(nil)
	go func() {
		if failed {
			select {
			case <-b.done:
			case <-time.After(abortGrace):
			}
		}
		b.cancel()
		b.u.close()
	}()
}

// endBridge releases a finished call's session: back to the pool when the
// call ended cleanly, closed otherwise.
func (p *Proxy) endBridge(b *bridge, clean bool) {
	b.cancel()
	b.u.slot.set(nil)
	if !clean {
		b.u.close()
		return
	}
	p.bridges.put(b.u)
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// bridgePool keeps the bridges parked with hosts, and idle bridged
// sessions for reuse, keyed by server and the capabilities offered, since
// what an upstream session was offered is fixed when it connects.
type bridgePool struct {
	mu     sync.Mutex
	parked map[string]*bridge
	idle   map[string][]*upstream
}

// maxIdleBridges bounds the idle sessions kept per key.
const maxIdleBridges = 4

func poolKey(server string, h hostView) string {
	c := capsOf(h)
	return fmt.Sprintf("%s/%t/%t", server, c.Tools, c.Context)
}

// get returns an idle session for cfg offered what h declared, or starts one.
func (bp *bridgePool) get(ctx context.Context, p *Proxy, cfg Upstream, h hostView) (*upstream, error) {
	key := poolKey(cfg.Name, h)
	bp.mu.Lock()
	if n := len(bp.idle[key]); n > 0 {
		u := bp.idle[key][n-1]
		bp.idle[key] = bp.idle[key][:n-1]
		bp.mu.Unlock()
		return u, nil
	}
	bp.mu.Unlock()
	l := newLink(hostView{era: h.era, caps: &mcp.ClientCapabilities{Sampling: h.caps.Sampling}})
	u, err := p.connectBridged(l, cfg)
	if err != nil {
		p.log.Error("bridged upstream failed to start", zap.String("server", cfg.Name), zap.Error(err))
		return nil, errUpstreamStart(cfg.Name)
	}
	u.poolKey = key
	return u, nil
}

func (bp *bridgePool) put(u *upstream) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.idle == nil {
		bp.idle = map[string][]*upstream{}
	}
	if len(bp.idle[u.poolKey]) >= maxIdleBridges {
		go u.close()
		return
	}
	bp.idle[u.poolKey] = append(bp.idle[u.poolKey], u)
}

func (bp *bridgePool) park(b *bridge) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.parked == nil {
		bp.parked = map[string]*bridge{}
	}
	bp.parked[b.id] = b
}

// unpark takes the bridge out, so a retry and an expiry never both act.
func (bp *bridgePool) unpark(id string) *bridge {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	b := bp.parked[id]
	delete(bp.parked, id)
	return b
}

// closeAll ends every parked call and closes every idle session.
func (bp *bridgePool) closeAll(p *Proxy) {
	bp.mu.Lock()
	parked, idle := bp.parked, bp.idle
	bp.parked, bp.idle = nil, nil
	bp.mu.Unlock()
	for _, b := range parked {
		b.timer.Stop()
		p.abortBridge(b, errShuttingDown())
	}
	for _, us := range idle {
		for _, u := range us {
			u.close()
		}
	}
}

// bridged reports whether x must be bridged: a 2026-07-28 host that can
// sample, calling an upstream that pushes.
func bridged(x *exchange) bool {
	return x.host.modern() && !x.u.modern() && x.host.canSample()
}
