package relay

import (
	"encoding/json"
	"sync"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// pushHolds keeps the admission of each request one upstream session sent
// and has not been answered yet, by JSON-RPC id. A push is admitted on
// the bytes the upstream sent, before anything validates or decides it:
// on its frame for a command upstream (frameScreen.admitFrame), else in
// the guard's screen; it stays in flight until the firewall's answer to
// its id goes back on the wire, whatever path produced that answer, or
// until the session ends. Nothing between the two needs to remember to
// release it.
type pushHolds struct {
	mu   sync.Mutex
	byID map[jsonrpc.ID][]pushHold // an upstream may reuse an id: one hold per request
	// framed holds what frameScreen admitted, until the guard's screen
	// claims it as the message reaches it.
	framed map[jsonrpc.ID][]*admit.Hold
	ended  bool
}

// pushHold is one push in flight: its admission, and its params as the
// upstream wrote them, which give what the firewall forwards of it the
// upstream's member order (sentParams).
type pushHold struct {
	hold   *admit.Hold
	params json.RawMessage
}

func newPushHolds() *pushHolds {
	return &pushHolds{byID: map[jsonrpc.ID][]pushHold{}, framed: map[jsonrpc.ID][]*admit.Hold{}}
}

// frame keeps h, admitted on its frame, for the screen of the message.
func (p *pushHolds) frame(id jsonrpc.ID, h *admit.Hold) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		h.Release()
		return
	}
	p.framed[id] = append(p.framed[id], h)
}

// claim takes the oldest hold admitted on a frame with id, or nil. The
// frame screen and the screen read the same bytes with the same decoder,
// in the same order, so the screen of a push frameScreen admitted finds
// its hold here, and that of any other push finds none.
func (p *pushHolds) claim(id jsonrpc.ID) *admit.Hold {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return take(p.framed, id)
}

// take removes and returns the oldest hold of id in m, or the zero value.
func take[H any](m map[jsonrpc.ID][]H, id jsonrpc.ID) H {
	hs := m[id]
	switch len(hs) {
	case 0:
		var none H
		return none
	case 1:
		delete(m, id)
	default:
		m[id] = hs[1:]
	}
	return hs[0]
}

// add keeps h, with the push's params, until id is answered. After the
// session ended it releases h at once: nothing will answer it.
func (p *pushHolds) add(id jsonrpc.ID, h *admit.Hold, params json.RawMessage) {
	if p == nil {
		h.Release()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		h.Release()
		return
	}
	p.byID[id] = append(p.byID[id], pushHold{h, params})
}

// answered releases the oldest hold of id, if any.
func (p *pushHolds) answered(id jsonrpc.ID) {
	p.mu.Lock()
	h := take(p.byID, id)
	p.mu.Unlock()
	h.hold.Release()
}

// sentParams is the params, as the upstream wrote them, of a push in
// flight that match accepts, or nil. The SDK hands the firewall a push
// decoded, without its id: match tells it by what it decodes to.
func (p *pushHolds) sentParams(match func(json.RawMessage) bool) json.RawMessage {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, hs := range p.byID {
		for _, h := range hs {
			if match(h.params) {
				return h.params
			}
		}
	}
	return nil
}

// only is the params of the one request in flight, and true, when there
// is exactly one. Every push the SDK hands on was held here first
// (guard.pushed) and stays until its answer is written: asked about a
// push while only one is in flight, that one is the push.
func (p *pushHolds) only() (json.RawMessage, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.byID) != 1 {
		return nil, false
	}
	for _, hs := range p.byID {
		if len(hs) == 1 {
			return hs[0].params, true
		}
	}
	return nil, false
}

// end releases every hold: the session is gone, and so is every request
// it had in flight.
func (p *pushHolds) end() {
	p.mu.Lock()
	answered, framed := p.byID, p.framed
	p.byID, p.framed, p.ended = map[jsonrpc.ID][]pushHold{}, map[jsonrpc.ID][]*admit.Hold{}, true
	p.mu.Unlock()
	for _, hs := range answered {
		for _, h := range hs {
			h.hold.Release()
		}
	}
	for _, hs := range framed {
		for _, h := range hs {
			h.Release()
		}
	}
}

// admitter is the admission step of a guard: it takes a hold for one
// request of size bytes from the upstream, or refuses it.
type admitter func(bytes int) (*admit.Hold, *jsonrpc.Error)

// guardFor is the raw screening of u's messages, with admission first.
func (p *Proxy) guardFor(u *upstream) guard {
	return guard{screen: p.screenFor(u), inputs: p.screenInputsFor(u), held: u.held, sent: u.inputs, listed: u.listed,
		admit: func(n int) (*admit.Hold, *jsonrpc.Error) {
			return p.admit.Acquire(u.cfg.Name, hostKey(u.link.host), admit.Claim{InFlight: 1, Bytes: int64(n)})
		},
		admitInputs: func(n int, bytes int64) *jsonrpc.Error {
			return p.admit.Fits(u.cfg.Name, hostKey(u.link.host), admit.Claim{InFlight: n, Bytes: bytes})
		}}
}

// admitPush admits a push of any kind relayed to a host on its raw
// params, before anything else is done with it. A request the guard lets
// through is kept in held until its answer is written; one it refuses is
// answered by the guard.
func (g guard) admitPush(msg *jsonrpc.Request) (*admit.Hold, *jsonrpc.Error) {
	if g.admit == nil {
		return nil, nil
	}
	return g.admit(len(msg.Params))
}

// admitInputRequests refuses an input_required result whose entries, of
// every kind relayed to a host, would not fit the upstream's limits now
// all together: they are counted on the bytes, before any is validated or
// decoded. Those that fit are admitted for real once decoded (admitRound).
func (g guard) admitInputRequests(entries []inputEntry) *jsonrpc.Error {
	if g.admitInputs == nil || len(entries) == 0 {
		return nil
	}
	var n int64
	for _, e := range entries {
		n += int64(len(e.params))
	}
	return g.admitInputs(len(entries), n)
}
