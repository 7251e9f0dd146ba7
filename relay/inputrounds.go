package relay

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// maxShedding bounds the retries of one call an upstream keeps answering
// with a bare requestState (load shedding), before the call fails.
const maxShedding = 3

// exchange is one host call relayed to a 2026-07-28 upstream, which may
// answer with input requests instead of a result: tools/call, prompts/get
// or resources/read (the only requests the 2026-07-28 revision lets an
// upstream answer so).
type exchange struct {
	u      *upstream
	host   hostView
	origin engine.Origin // the host's call: method and the name it used
	digest string        // binds a requestState to this call (seal.CallDigest)
	// send makes one attempt on cs with the answers to the previous round's
	// input requests and the upstream's state, echoed exactly. cs is the
	// upstream's session, or a bridged call's own.
	send func(ctx context.Context, cs *mcp.ClientSession, responses mcp.InputResponseMap, state string) (mcp.Result, error)
}

// relayInputs runs the input-request loop for x (SDK middleware off, so
// every entry crosses the firewall): it asks the upstream, and while the
// upstream needs input, either answers each entry here by asking an older
// host (relayRound) or hands the entries back to a 2026-07-28 host
// (handBack), whose retry resumes the loop (resume). A refusal ends the
// call: the upstream is never retried with a refused entry.
func (p *Proxy) relayInputs(ctx context.Context, x *exchange, responses mcp.InputResponseMap, state string, round int) (mcp.Result, error) {
	ctx, cancel := x.u.link.whileAlive(ctx) // its reviews end with the link, as a push's do
	defer cancel()
	shed := 0
	for {
		res, err := x.send(ctx, x.u.session, p.responsesInHostOrder(responses), state)
		if err != nil {
			return nil, p.callError(ctx, x, err)
		}
		reqs, next, needs := pendingInputs(res)
		if !needs {
			return res, nil
		}
		if len(reqs) == 0 {
			if shed++; shed > maxShedding {
				return nil, refusal.Deferred(x.u.cfg.Name, maxShedding)
			}
			if err := backOff(ctx, shed); err != nil {
				return nil, refusal.Cancelled()
			}
			responses, state = nil, next
			continue
		}
		if round++; round > p.cfg.MaxRounds {
			return nil, refusal.MaxRounds(x.u.cfg.Name, p.cfg.MaxRounds)
		}
		held, werr := p.admitRound(x.u, reqs)
		if werr != nil {
			return nil, werr
		}
		if x.host.modern() {
			return p.handBack(ctx, x, reqs, next, round, held)
		}
		responses, err = p.relayRound(ctx, x, reqs, round)
		held.Release()
		if err != nil {
			return nil, err
		}
		state = next
	}
}

// admitRound admits every entry of one round of input requests together,
// whatever its kind, each one request in flight with its encoded size, or
// refuses the round. The guard has already refused, on the bytes, a round
// that would not fit (admitInputRequests); this is the authoritative
// count, made once the entries are decoded. The hold lasts until the
// round is answered.
func (p *Proxy) admitRound(u *upstream, reqs mcp.InputRequestMap) (*admit.Hold, *jsonrpc.Error) {
	var c admit.Claim
	for _, in := range reqs {
		raw, err := encodeEntry(in)
		if err != nil {
			return nil, refusal.Internal("input request could not be encoded")
		}
		c = c.Add(admit.Claim{InFlight: 1, Bytes: int64(len(raw))})
	}
	if c == (admit.Claim{}) {
		return nil, nil
	}
	return p.admit.Acquire(u.cfg.Name, hostKey(u.link.host), c)
}

// encodeEntry is an input request as it would go to a host: as its kind
// forwards it, or as it came for a kind the firewall does not know (which
// is refused later, but counted all the same).
func encodeEntry(in mcp.InputRequest) ([]byte, error) {
	if k := pipeline.Of(in); k != nil {
		in = k.Forwardable(in)
	}
	return json.Marshal(in)
}

// relayRound answers one round of input requests for a host older than
// 2026-07-28: each entry, whatever its kind, goes through the whole
// firewall and to the host by push.
func (p *Proxy) relayRound(ctx context.Context, x *exchange, reqs mcp.InputRequestMap, round int) (mcp.InputResponseMap, error) {
	out := mcp.InputResponseMap{}
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		res, err := p.relayEntry(ctx, x, reqs[key], round)
		if err != nil {
			return nil, err
		}
		out[key] = res
	}
	return out, nil
}

// relayEntry answers one input request by asking an older host. A refusal
// fails the call: the upstream is never retried with a refused entry.
func (p *Proxy) relayEntry(ctx context.Context, x *exchange, in mcp.InputRequest, round int) (mcp.InputResponse, error) {
	h := x.host
	k := pipeline.Of(in)
	if k == nil {
		return nil, refusal.UnknownInputRequest(x.u.cfg.Name)
	}
	if !k.Declared(h.caps) && !(k.OperatorAnswers() && x.u.cfg.OperatorAnswer) {
		return nil, missingCapability(h, k.Capability)
	}
	o := x.origin
	o.Round = round
	in, sent := p.inSentOrder(x.u, in)
	return p.pipe.Run(withSent(ctx, sent), p.source(x.u, h, o), k, in)
}

// missingCapability is the error for an input request h cannot answer
// because it did not declare what it needs.
func missingCapability(h hostView, capability string) *jsonrpc.Error {
	return refusal.MissingCapability(h.modern(), capability)
}

// pendingInputs reads an input_required answer: its requests, the
// upstream's state, and whether it needs input at all.
func pendingInputs(res mcp.Result) (mcp.InputRequestMap, string, bool) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	case *mcp.GetPromptResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	case *mcp.ReadResourceResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	}
	return nil, "", false
}

// backOff waits before retrying a call the upstream deferred: 100 ms,
// doubling, unless ctx ends first.
func backOff(ctx context.Context, attempt int) error {
	t := time.NewTimer(100 * time.Millisecond << (attempt - 1))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
