package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// Handovers: a bridged call lives in the memory of the replica that
// started it (the holder), with its upstream session and the pushes it
// parked. A 2026-07-28 host's retry of it carries no session, so behind a
// balancer it may reach any replica; the one it reaches (the asker) hands
// it to the holder through the shared review store (review.Handover), and
// answers the host with what the holder answers. The store carries it
// because every replica already shares it, and PostgreSQL's NOTIFY wakes
// each side at once: no listener, address or credential between replicas
// is needed. What crosses the store is sealed with the replicas' key
// (seal.Sealer.Box, bound to the state's nonce): the host's answers on the
// way in, the upstream's answer on the way out; the asker deletes the row
// as it reads the answer.
//
// The asker checks only the state's seal, binding and expiry; the holder
// spends it and checks the answers (its result stage), exactly as for a
// retry that reaches it, so the trust rules are the holder's. The row's
// key, the state's nonce, makes a replayed retry's second handover fail
// at once; the holder's one-time spend of the nonce decides between a
// handover and the same retry reaching the holder itself.

// handoverAsk is what the asker hands the holder: the host's requestState
// and answers, as the host wrote them.
type handoverAsk struct {
	State   string          `json:"state"`
	Answers json.RawMessage `json:"answers"`
}

// handoverReply is what the holder answers: the call's result or its
// error, each as the wire carries it.
type handoverReply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// handoverWait bounds how long an asker waits for the holder's answer:
// sampling.host_timeout, which bounds a push to a host that answers it
// while its call waits, as the resumed upstream's next step does here.
func (p *Proxy) handoverWait() time.Duration { return p.cfg.HostTimeout }

// handOver hands a retry of a bridged call another replica holds to that
// replica and returns its answer. Without a store shared with the holder
// the retry is refused as reaching the wrong replica, spending nothing; a
// holder that is gone fails it at once. While it waits it counts as a
// bridged call here (limits.max_bridged_calls): a host's flood of retries
// writes and waits on that many rows at most, and one past it is refused
// before anything is written, its state unspent.
func (p *Proxy) handOver(ctx context.Context, x *exchange, cont seal.Continuation, answers mcp.InputResponseMap, state string) (mcp.Result, error) {
	if p.store == nil || cont.Lease == "" {
		p.log.Warn("bridged call's retry reached another replica, which shares no store with it", zap.String("server", x.u.cfg.Name))
		return nil, refusal.BridgeElsewhere()
	}
	release, err := p.bridges.admit(x.u.cfg.Name, p.cfg.MaxBridgedPerServer, p.cfg.MaxBridged)
	if err != nil {
		p.log.Warn("bridged call's retry not handed over", zap.String("server", x.u.cfg.Name), zap.Error(err))
		return nil, err
	}
	defer release()
	if err := p.holderPresent(ctx, x, cont); err != nil {
		return nil, err
	}
	// Woken from before the ask, so the answer cannot come unheard.
	wake, stop := p.store.HandoverWake("answer:" + cont.Nonce)
	h, err := p.askHandover(ctx, x, cont, answers, state)
	if err != nil {
		stop()
		return nil, err
	}
	return p.awaitHandover(ctx, x, cont, h.Expires, wake, stop)
}

// holderPresent refuses the retry at once when the holder is gone.
func (p *Proxy) holderPresent(ctx context.Context, x *exchange, cont seal.Continuation) error {
	alive, err := p.store.HolderAlive(ctx, cont.Lease)
	switch {
	case err != nil:
		p.log.Error("bridged call's holder not looked up", zap.String("server", x.u.cfg.Name), zap.Error(err))
		return refusal.HandoverUnavailable()
	case !alive:
		p.log.Warn("bridged call's retry reached another replica, and the replica holding the call is gone",
			zap.String("server", x.u.cfg.Name), zap.String("holder", cont.Lease))
		return refusal.BridgeHolderGone()
	}
	return nil
}

// askHandover writes the handover's row: the state and the host's answers
// (in the member order the host wrote them), sealed.
func (p *Proxy) askHandover(ctx context.Context, x *exchange, cont seal.Continuation, answers mcp.InputResponseMap, state string) (review.Handover, error) {
	raw, err := json.Marshal(p.responsesInHostOrder(answers))
	if err != nil {
		return review.Handover{}, refusal.Internal("the host's answers could not be encoded")
	}
	plain, err := json.Marshal(handoverAsk{State: state, Answers: raw})
	if err != nil {
		return review.Handover{}, refusal.Internal("the host's answers could not be encoded")
	}
	box, err := p.sealer.Box(plain, cont.Nonce)
	if err != nil {
		return review.Handover{}, refusal.Internal("the host's answers could not be sealed")
	}
	h := review.Handover{Nonce: cont.Nonce, Holder: cont.Replica, Server: cont.Server, Call: cont.Call,
		Expires: time.Now().Add(p.handoverWait()), Payload: box}
	err = p.store.AskHandover(ctx, h)
	switch {
	case errors.Is(err, review.ErrHandoverClaimed):
		return h, p.stateRejected(x, fmt.Errorf("%w: %w", seal.ErrReplayed, err))
	case err != nil:
		p.log.Error("bridged call's retry not handed over", zap.String("server", x.u.cfg.Name), zap.Error(err))
		return h, refusal.HandoverUnavailable()
	}
	return h, nil
}

// awaitHandover waits for the holder's answer until deadline, woken by
// the store (PostgreSQL; wake is the first wake-up, taken before the ask)
// or its poll, and checks the holder lives at each poll: a holder gone,
// the deadline passed or the host gone withdraws the handover, so nothing
// the holder answers later is delivered.
func (p *Proxy) awaitHandover(ctx context.Context, x *exchange, cont seal.Continuation, deadline time.Time, wake <-chan struct{}, stop func()) (mcp.Result, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	tick := time.NewTicker(min(p.pollInterval(), review.DefaultPollInterval))
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			wake, stop = p.store.HandoverWake("answer:" + cont.Nonce)
			if box, ok := p.handedBox(ctx, x, cont); ok {
				stop()
				return p.handedAnswer(x, cont, box)
			}
		}
		var why error
		select {
		case <-wake:
		case <-tick.C:
			if alive, err := p.store.HolderAlive(ctx, cont.Lease); err == nil && !alive {
				why = refusal.BridgeHolderGone()
			}
		case <-timer.C:
			why = refusal.HandoverTimeout(p.handoverWait())
		case <-ctx.Done():
			why = ctx.Err()
		}
		stop()
		if why != nil {
			return p.withdrawHandover(ctx, x, cont, why)
		}
	}
}

// handedBox reads and deletes the holder's answer, once it is there. A
// read that fails is logged and tried again at the next wake-up or poll.
func (p *Proxy) handedBox(ctx context.Context, x *exchange, cont seal.Continuation) ([]byte, bool) {
	box, ok, err := p.store.HandoverAnswer(ctx, cont.Nonce)
	if err != nil && ctx.Err() == nil {
		p.log.Warn("handed-over retry's answer not read; reading again", zap.String("server", x.u.cfg.Name), zap.Error(err))
	}
	return box, ok
}

// withdrawTimeout bounds the delete that withdraws a handover.
const withdrawTimeout = 5 * time.Second

// withdrawHandover deletes the handover's row and fails the retry with
// why, unless the holder's answer came meanwhile: that one is delivered.
func (p *Proxy) withdrawHandover(ctx context.Context, x *exchange, cont seal.Continuation, why error) (mcp.Result, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	box, ok, err := p.store.WithdrawHandover(ctx, cont.Nonce)
	if ok {
		return p.handedAnswer(x, cont, box)
	}
	if err != nil {
		p.log.Error("handed-over retry not withdrawn: its answer, if one comes, is swept unread", zap.String("server", x.u.cfg.Name), zap.Error(err))
	}
	p.log.Warn("handed-over retry withdrawn", zap.String("server", x.u.cfg.Name), zap.Error(why))
	return nil, why
}

// handedAnswer opens the holder's answer: the call's error, or its result
// decoded for the host's method.
func (p *Proxy) handedAnswer(x *exchange, cont seal.Continuation, box []byte) (mcp.Result, error) {
	plain, err := p.sealer.Unbox(box, cont.Nonce)
	if err != nil {
		p.log.Error("handed-over retry's answer does not open", zap.String("server", x.u.cfg.Name), zap.Error(err))
		return nil, refusal.Internal("the answer of the replica holding the bridged call could not be read")
	}
	var r handoverReply
	if err := json.Unmarshal(plain, &r); err != nil {
		return nil, refusal.Internal("the answer of the replica holding the bridged call could not be read")
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return handedResult(x.origin.Method, r.Result)
}

// handedResult decodes a result the holder encoded, as the SDK decodes
// an upstream's (which marks one input_required); the input requests of
// one keep the member order the holder gave their free-form values.
func handedResult(method string, raw json.RawMessage) (mcp.Result, error) {
	res, err := newResult(method)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, refusal.Internal("result could not be decoded")
	}
	reqs, _, _ := pendingInputs(res)
	if len(reqs) > 0 {
		sent := rawjson.MemberValue(raw, "inputRequests")
		for key, r := range reqs {
			reqs[key] = pipeline.InOrderOf(r, rawjson.MemberValue(rawjson.MemberValue(sent, key), "params"))
		}
		keepRequests(res, reqs)
	}
	return res, nil
}
