package relay

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// The holder's side of a handover (handover.go): the retries other
// replicas hand to the bridged calls this one holds.

// presentTimeout bounds how long parking a bridged call waits for the
// store to find this replica present (its listener's first connection).
const presentTimeout = 5 * time.Second

// holding readies this replica to take the retries of the bridged calls
// it parks that reach other replicas, and is its name for them in the
// store (the owner token its presence is looked up by); "" without a
// store, when no other replica can reach it.
func (p *Proxy) holding() string {
	if p.store == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), presentTimeout)
	defer cancel()
	p.store.Present(ctx)
	p.handovers.Do(func() { go p.serveHandovers() })
	return p.store.Owner()
}

// serveHandovers takes the retries handed to this replica, woken by the
// store (PostgreSQL) or, while it has calls parked, at each poll, until
// the firewall stops.
func (p *Proxy) serveHandovers() {
	tick := time.NewTicker(min(p.pollInterval(), review.DefaultPollInterval))
	defer tick.Stop()
	woken := true // a first look
	for !p.bridges.stopped() {
		// Woken before it reads, so an ask during the read is not missed.
		wake, stop := p.store.HandoverWake("ask:" + p.replica)
		if woken || p.bridges.parking() {
			p.takeHandovers()
		}
		select {
		case <-wake:
			woken = true
		case <-tick.C:
			woken = false
		}
		stop()
	}
}

// takeHandovers takes the retries asked of this replica and resumes each
// on its own goroutine.
func (p *Proxy) takeHandovers() {
	hs, err := p.store.TakeHandovers(context.Background(), p.replica)
	if err != nil {
		p.log.Warn("handed-over retries not read; reading again at the next poll", zap.Error(err))
	}
	for _, h := range hs {
		go p.answerHandover(h)
	}
}

// answerHandover resumes a handed-over retry, until its asker's deadline,
// and writes the call's answer, sealed, for the asker. An asker that gave
// up meanwhile gets nothing: the answer is dropped.
func (p *Proxy) answerHandover(h review.Handover) {
	ctx, cancel := context.WithDeadline(context.Background(), h.Expires)
	defer cancel()
	go p.watchWithdrawn(ctx, cancel, h)
	res, err := p.resumeHandedOver(ctx, h)
	box, err := p.handoverAnswer(h, res, err)
	if err == nil {
		err = p.store.AnswerHandover(context.WithoutCancel(ctx), h, box)
	}
	switch {
	case errors.Is(err, review.ErrHandoverGone):
		p.log.Warn("handed-over retry answered after its asker gave up: the answer is dropped", zap.String("server", h.Server))
	case err != nil:
		p.log.Error("handed-over retry's answer not written", zap.String("server", h.Server), zap.Error(err))
	}
}

// handoverAnswer is res or err sealed for h's asker. One the row cannot
// hold (a result Go encodes to several times the size the upstream sent:
// each '<' becomes \u003c) is the firewall's error instead, so its asker
// fails at once rather than at its deadline.
func (p *Proxy) handoverAnswer(h review.Handover, res mcp.Result, err error) ([]byte, error) {
	plain, merr := json.Marshal(replyOf(res, err))
	if merr != nil {
		plain = internalReply("result could not be encoded")
	}
	box, err := p.sealer.Box(plain, h.Nonce)
	if err == nil && len(box) > review.MaxContinuationBytes {
		p.log.Warn("handed-over retry's answer too large for the store: the asker gets an error", zap.String("server", h.Server), zap.Int("bytes", len(box)))
		box, err = p.sealer.Box(internalReply("the result is too large to hand to the replica the host retried on"), h.Nonce)
	}
	return box, err
}

// internalReply is the encoded reply of the firewall's own failure.
func internalReply(message string) []byte {
	plain, _ := json.Marshal(handoverReply{Error: refusal.Internal(message)})
	return plain
}

// watchWithdrawn ends a resumed handover (cancel) once its asker has
// withdrawn it (its host left, or it gave up waiting), as a host that
// leaves ends a retry that reached this replica: the call is aborted, its
// open reviews abandoned. It watches until ctx ends, woken by the row's
// deletion (PostgreSQL) or at each poll.
func (p *Proxy) watchWithdrawn(ctx context.Context, cancel context.CancelFunc, h review.Handover) {
	tick := time.NewTicker(p.pollInterval())
	defer tick.Stop()
	for {
		wake, stop := p.store.HandoverWake("gone:" + h.Nonce)
		taken, err := p.store.HandoverTaken(ctx, h)
		if err == nil && !taken {
			stop()
			cancel()
			return
		}
		select {
		case <-wake:
		case <-tick.C:
		case <-ctx.Done():
		}
		stop()
		if ctx.Err() != nil {
			return
		}
	}
}

// replyOf is res or err as the asker reads them: an error that is no
// wire error is the firewall's own failure.
func replyOf(res mcp.Result, err error) handoverReply {
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			we = refusal.Internal("the bridged call failed on the replica holding it")
		}
		return handoverReply{Error: we}
	}
	raw, merr := json.Marshal(res)
	if merr != nil {
		return handoverReply{Error: refusal.Internal("result could not be encoded")}
	}
	return handoverReply{Result: raw}
}

// resumeHandedOver resumes the bridged call a handed-over retry names, as
// a retry that reached this replica would be: the state opens with this
// replica's key for the row's server and call, names a call parked here,
// and is spent here once; the answers pass the result stage here.
func (p *Proxy) resumeHandedOver(ctx context.Context, h review.Handover) (mcp.Result, error) {
	plain, err := p.sealer.Unbox(h.Payload, h.Nonce)
	var a handoverAsk
	if err == nil {
		err = json.Unmarshal(plain, &a)
	}
	if err != nil {
		p.log.Error("handed-over retry does not open", zap.String("server", h.Server), zap.Error(err))
		return nil, refusal.Internal("the handed-over retry could not be read")
	}
	cont, err := p.sealer.Unseal(a.State, h.Server, h.Call)
	if err != nil {
		return nil, stateRejection(err)
	}
	if cont.Replica != p.replica || cont.Nonce != h.Nonce {
		return nil, refusal.BridgeGone()
	}
	// Spent first: a replay handed over after the first one's row was
	// read and deleted is refused as used, as it would be here.
	if err := p.sealer.Spend(cont); err != nil {
		p.log.Warn("requestState rejected", zap.String("server", h.Server), zap.Error(err))
		return nil, stateRejection(err)
	}
	b := p.bridges.peek(cont.Bridge)
	entries, held, ok := p.handed.take(a.State)
	held.Release() // nil: a bridged call's pushes are held on the wire
	if b == nil || !ok {
		return nil, refusal.BridgeGone()
	}
	var answers mcp.InputResponseMap
	if err := json.Unmarshal(a.Answers, &answers); err != nil {
		return nil, refusal.Internal("the host's answers could not be decoded")
	}
	p.keepHostAnswers(a.Answers)
	return p.resumeBridge(ctx, b.x, cont, answers, entries)
}

// keepHostAnswers keeps each answer as the host wrote it, so it reaches
// the upstream in the host's member order (answerorder.go), as when the
// host's retry reaches this replica.
func (p *Proxy) keepHostAnswers(answers json.RawMessage) {
	if p.answers == nil {
		return
	}
	for _, m := range rawjson.Members(answers) {
		p.answers.keep(m.Value)
	}
}
