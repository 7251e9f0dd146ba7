package relay

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// handedRounds holds, per sealed requestState, what this process keeps of
// a round handed to a host until it retries or the state expires. The
// state itself carries the upstream's state and the keys, sealed; the
// entries are what must not travel through the host at all. They are
// here for a bridged call (whose pushes wait in this process anyway) and
// when the Proxy has no store; otherwise they are in the store, which any
// replica resumes from (handbackstore.go), and here is only the round's
// admission (admitRound), kept until then: its entries are in flight,
// waiting for the host. A round another replica resumed is found by the
// poll of the store (pollStored), which gives its admission back.
type handedRounds struct {
	mu      sync.Mutex
	rounds  map[string]*handedRound
	polling bool // pollStored runs
	closed  bool // closeAll ran: nothing more is kept
}

type handedRound struct {
	entries map[string]pipeline.Entry // nil when they are in the store
	nonce   string                    // the store's name for the round; "" when not stored
	hold    *admit.Hold
	expiry  *time.Timer // forgets the round when its state expires
}

// put keeps a round whose entries hold nothing of their own (a bridged
// call's pushes are held until answered on the wire).
func (h *handedRounds) put(state string, entries map[string]pipeline.Entry, expires time.Time) {
	h.keep(state, &handedRound{entries: entries}, expires)
}

// putHeld keeps a round until take, its expiry or closeAll, whichever
// comes first, and releases its hold then.
func (h *handedRounds) putHeld(state string, entries map[string]pipeline.Entry, expires time.Time, hold *admit.Hold) {
	h.keep(state, &handedRound{entries: entries, hold: hold}, expires)
}

// keep keeps r under state until its state expires, if nothing takes it
// first, and reports whether it did. After closeAll it keeps nothing and
// releases r's hold at once: a round handed out while the firewall stops
// (its request cleared during the drain) would otherwise hold the drain
// until its state expired. A stored round's row stays for another replica.
func (h *handedRounds) keep(state string, r *handedRound, expires time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		r.hold.Release()
		return false
	}
	if h.rounds == nil {
		h.rounds = map[string]*handedRound{}
	}
	r.expiry = time.AfterFunc(time.Until(expires), func() {
		if r, ok := h.remove(state); ok {
			r.hold.Release()
		}
	})
	h.rounds[state] = r
	return true
}

// take removes and returns the round for state, and its hold, which the
// caller releases once it has checked the host's answers.
func (h *handedRounds) take(state string) (map[string]pipeline.Entry, *admit.Hold, bool) {
	r, ok := h.remove(state)
	if !ok {
		return nil, nil, false
	}
	r.expiry.Stop()
	return r.entries, r.hold, true
}

func (h *handedRounds) remove(state string) (*handedRound, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.rounds[state]
	delete(h.rounds, state)
	return r, ok
}

// closeAll forgets every round: the firewall is stopping, and no retry
// will be answered here. A round kept in the store stays there, for
// another replica to resume until its state expires.
func (h *handedRounds) closeAll() {
	h.mu.Lock()
	rounds := h.rounds
	h.rounds, h.closed = nil, true
	h.mu.Unlock()
	for _, r := range rounds {
		r.expiry.Stop()
		r.hold.Release()
	}
}

// handBack answers a 2026-07-28 host's call with the upstream's input
// requests: each entry has passed the request stage (validation, policy,
// review) and goes out as cleared, and its answer will pass the result
// stage (checkAnswer). The requestState is the firewall's own, sealed;
// the host's retry resumes the loop (resume).
func (p *Proxy) handBack(ctx context.Context, x *exchange, reqs mcp.InputRequestMap, upstreamState string, round int, held *admit.Hold) (mcp.Result, error) {
	kept := false
	defer func() {
		if !kept {
			held.Release()
		}
	}()
	out := mcp.InputRequestMap{}
	entries := map[string]pipeline.Entry{}
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		k := pipeline.Of(reqs[key])
		if k == nil {
			return nil, refusal.UnknownInputRequest(x.u.cfg.Name)
		}
		if !k.Declared(x.host.caps) {
			return nil, missingCapability(x.host, k.Capability)
		}
		o := x.origin
		o.Round = round
		in, sent := p.inSentOrder(x.u, reqs[key])
		c, err := p.pipe.Decide(ctx, p.source(x.u, x.host, o), k, in)
		if err != nil {
			return nil, err
		}
		p.editInSentOrder(c.Params, sent)
		out[key], entries[key] = c.Params, c.Entry
	}
	cont := seal.Continuation{Server: x.u.cfg.Name, Call: x.digest, State: upstreamState,
		Keys: slices.Sorted(maps.Keys(out)), Round: round, Expires: time.Now().Add(p.cfg.StateTTL)}
	sealed, cont, err := p.sealer.Sealed(cont)
	if err != nil {
		return nil, refusal.Internal("requestState could not be sealed")
	}
	if p.store == nil {
		p.handed.putHeld(sealed, entries, cont.Expires, held)
	} else if err := p.putStored(ctx, sealed, cont, entries, held); err != nil {
		return nil, err
	}
	kept = true
	return inputRequired(x.origin.Method, out, sealed)
}

// resume continues a call a 2026-07-28 host retried: the state must be the
// firewall's, unaltered, unexpired, unused and for this server and call;
// every key handed out must be answered, and each completion passes the
// result stage before the upstream sees it. Keys the host adds are dropped.
//
// A round kept in the store may be resumed by any replica sharing it and
// the seal key; a bridged call only by the process that holds it, to
// which another replica hands the retry.
func (p *Proxy) resume(ctx context.Context, x *exchange, answers mcp.InputResponseMap, state string) (mcp.Result, error) {
	cont, err := p.sealer.Unseal(state, x.u.cfg.Name, x.digest)
	if err != nil {
		return nil, p.stateRejected(x, err)
	}
	if cont.Bridge != "" {
		return p.resumeBridged(ctx, x, cont, answers, state)
	}
	var entries map[string]pipeline.Entry
	var held *admit.Hold
	if p.store == nil {
		entries, held, err = p.takeHeld(x, cont, state)
	} else {
		entries, held, err = p.takeStored(ctx, x, cont, state)
	}
	if err != nil {
		return nil, err
	}
	responses, err := p.checkAnswers(ctx, x, cont.Keys, answers, entries)
	held.Release()
	if err != nil {
		return nil, err
	}
	return p.relayInputs(ctx, x, responses, cont.State, cont.Round)
}

// stateRejected logs why a state was refused and is its wire error.
func (p *Proxy) stateRejected(x *exchange, err error) error {
	p.log.Warn("requestState rejected", zap.String("server", x.u.cfg.Name), zap.Error(err))
	return stateRejection(err)
}

// takeHeld spends the state in this process and takes its round from
// memory.
func (p *Proxy) takeHeld(x *exchange, cont seal.Continuation, state string) (map[string]pipeline.Entry, *admit.Hold, error) {
	if err := p.sealer.Spend(cont); err != nil {
		return nil, nil, p.stateRejected(x, err)
	}
	entries, held, ok := p.handed.take(state)
	if !ok {
		return nil, nil, refusal.StateRejected("no longer held")
	}
	return entries, held, nil
}

// resumeBridged resumes a bridged call, which lives in the memory of the
// process that parked it: a retry another replica receives is handed to
// that process (handover.go).
func (p *Proxy) resumeBridged(ctx context.Context, x *exchange, cont seal.Continuation, answers mcp.InputResponseMap, state string) (mcp.Result, error) {
	if cont.Replica != p.replica {
		return p.handOver(ctx, x, cont, answers, state)
	}
	entries, held, err := p.takeHeld(x, cont, state)
	if err != nil {
		return nil, err
	}
	held.Release() // nil: a bridged call's pushes are held on the wire
	return p.resumeBridge(ctx, x, cont, answers, entries)
}

// checkAnswers checks the host's answer to every handed-out key.
func (p *Proxy) checkAnswers(ctx context.Context, x *exchange, keys []string, answers mcp.InputResponseMap, entries map[string]pipeline.Entry) (mcp.InputResponseMap, error) {
	responses := mcp.InputResponseMap{}
	for _, key := range keys {
		res, err := p.checkAnswer(ctx, x, key, answers[key], entries)
		if err != nil {
			return nil, err
		}
		responses[key] = res
	}
	return responses, nil
}

// checkAnswer checks the host's answer to one handed-out key: it must be
// an answer of the entry's kind, and pass the result stage.
func (p *Proxy) checkAnswer(ctx context.Context, x *exchange, key string, answer mcp.InputResponse, entries map[string]pipeline.Entry) (mcp.InputResponse, error) {
	if answer == nil {
		return nil, refusal.AnswerMissing(key)
	}
	e, ok := entries[key]
	if !ok {
		return nil, refusal.Internal("input request not held") // every key handed out has an entry
	}
	res, ok := e.Kind.Answer(answer)
	if !ok {
		return nil, refusal.AnswerInvalid(e.Kind.Name, key)
	}
	return p.pipe.Check(ctx, p.source(x.u, x.host, x.origin), e, res)
}

// inputRequired builds the answer a 2026-07-28 host gets for method. The
// SDK marks results input_required only in its own handlers, so the result
// is decoded from its wire form, which sets the mark.
func inputRequired(method string, reqs mcp.InputRequestMap, state string) (mcp.Result, error) {
	res, err := withResultType(method, map[string]any{"inputRequests": reqs, "requestState": state}, "input_required")
	if err != nil {
		return nil, err
	}
	keepRequests(res, reqs)
	return res, nil
}

// keepRequests puts reqs back into res as they were cleared: decoded
// again, their free-form values (a form's schema) would lose the order
// pipeline.InOrderOf gave them.
func keepRequests(res mcp.Result, reqs mcp.InputRequestMap) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		r.InputRequests = reqs
	case *mcp.GetPromptResult:
		r.InputRequests = reqs
	case *mcp.ReadResourceResult:
		r.InputRequests = reqs
	}
}

// withResultType decodes fields, plus resultType, into method's result type.
func withResultType(method string, fields map[string]any, resultType string) (mcp.Result, error) {
	fields["resultType"] = resultType
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, refusal.Internal("result could not be encoded")
	}
	res, err := newResult(method)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, refusal.Internal("result could not be decoded")
	}
	return res, nil
}

// newResult is an empty result of method's type, for a method that may
// need input.
func newResult(method string) (mcp.Result, error) {
	switch method {
	case "tools/call":
		return new(mcp.CallToolResult), nil
	case "prompts/get":
		return new(mcp.GetPromptResult), nil
	case "resources/read":
		return new(mcp.ReadResourceResult), nil
	}
	return nil, refusal.Internal("no input requests on " + method)
}
