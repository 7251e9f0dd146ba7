package relay

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// URL-mode elicitation's two messages of its own (2025-11-25; 2026-07-28
// has neither): notifications/elicitation/complete, which an upstream sends
// once the user finished at the URL, and error -32042 (URL elicitation
// required), with which it fails a call until they do. A completion
// reaches the host that was asked that elicitation through that upstream,
// and only it: the ids the upstream may complete are those of the URL
// elicitations its host accepted (elicitation/create) or was handed
// (-32042), and an upstream session serves one host. Any other
// completion is dropped.

// Bounds on what one upstream session may have the firewall remember.
const (
	maxURLElicitations = 64               // awaiting completion at once; the oldest is forgotten first
	maxElicitationID   = 256              // bytes of an id worth remembering
	urlElicitationTTL  = 30 * time.Minute // how long a completion is awaited
)

// urlElicitations are the ids one upstream session may complete, each
// with the time it stops being awaited.
type urlElicitations struct {
	mu      sync.Mutex
	expires map[string]time.Time
}

// expect awaits id's completion until now+urlElicitationTTL.
func (e *urlElicitations) expect(id string, now time.Time) {
	if id == "" || len(id) > maxElicitationID {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.expires == nil {
		e.expires = map[string]time.Time{}
	}
	e.forget(now)
	e.expires[id] = now.Add(urlElicitationTTL)
}

// forget drops the expired ids, and the oldest while there are too many;
// callers hold mu.
func (e *urlElicitations) forget(now time.Time) {
	for id, t := range e.expires {
		if !now.Before(t) {
			delete(e.expires, id)
		}
	}
	for len(e.expires) >= maxURLElicitations {
		oldest, first := "", time.Time{}
		for id, t := range e.expires {
			if oldest == "" || t.Before(first) {
				oldest, first = id, t
			}
		}
		delete(e.expires, oldest)
	}
}

// take reports whether id was awaited, and stops awaiting it.
func (e *urlElicitations) take(id string, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.expires[id]
	delete(e.expires, id)
	return ok && now.Before(t)
}

// completesURLs reports whether u's completions can reach a host: a
// session at a revision with URL mode, offered it, serving one host that
// initialized (not the shared 2026-07-28 link, not a bridged call's).
func (u *upstream) completesURLs() bool {
	l := u.link
	return !u.modern() && u.caps.URL && !l.shared && l.bridge == nil && l.host.session != nil && !l.host.modern()
}

// watchURLElicitations is the receiving middleware of every upstream
// client: a URL-mode elicitation/create its host accepted makes its id
// one the upstream may complete. It reads what goes back to the upstream,
// after every check the firewall made.
func (p *Proxy) watchURLElicitations(u *upstream) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "elicitation/create" || err != nil || !u.completesURLs() {
				return res, err
			}
			r, ok := req.(*mcp.ElicitRequest)
			er, ok2 := res.(*mcp.ElicitResult)
			if ok && ok2 && r.Params != nil && er.Action == "accept" && urlMode(r.Params) {
				u.urls.expect(r.Params.ElicitationID, time.Now())
			}
			return res, err
		}
	}
}

// urlMode reports whether params ask for URL mode, a mode left out read
// as forwardableElicit writes it for the host: one inference, so the ids
// awaited are those of the elicitations the host was asked in URL mode.
func urlMode(params *mcp.ElicitParams) bool {
	return pipeline.ForwardableElicit(params).Mode == "url"
}

// urlOffered reports whether u was offered URL-mode elicitation: a -32042
// from a server that was not must never send the host to its URLs.
func urlOffered(u *upstream) bool {
	return u.modern() && u.cfg.Elicitation.Enabled || !u.modern() && u.caps.URL
}

// urlElicitationRequired is what the host's call x gets of an upstream's
// -32042: each elicitation in its data goes through the request stage as
// any URL-mode elicitation does (validated on the bytes the upstream sent,
// then decided, an escalation waiting for its review, all recorded), and
// the host gets the -32042 rebuilt from the cleared params alone (the
// firewall's message, and of each elicitation only what the SDK's type
// holds, an operator's edit in place), their ids then awaited from that
// upstream. One refused elicitation refuses the whole error as the wire
// table refuses an elicitation toward the host's call (-1 deny or reject,
// -32602 invalid, -32603 could not decide): the host is sent to none of
// its URLs. From an upstream that was not offered URL-mode elicitation it
// is the firewall's refusal (-32602), before any decision.
func (p *Proxy) urlElicitationRequired(ctx context.Context, x *exchange, we *jsonrpc.Error) error {
	u := x.u
	if !urlOffered(u) {
		u.log.Warn("URL elicitation required, from a server not offered URL-mode elicitation: refused")
		return refusal.NotOffered(u.cfg.Name, "elicitation")
	}
	var data struct {
		Elicitations []json.RawMessage `json:"elicitations"`
	}
	if json.Unmarshal(we.Data, &data) != nil || len(data.Elicitations) == 0 || len(data.Elicitations) > maxURLElicitations {
		return refusal.URLElicitationsInvalid(u.cfg.Name, maxURLElicitations)
	}
	cleared := make([]*mcp.ElicitParams, 0, len(data.Elicitations))
	for _, raw := range data.Elicitations {
		params, err := p.clearURLElicitation(ctx, x, raw)
		if err != nil {
			return err
		}
		cleared = append(cleared, params)
	}
	if u.completesURLs() {
		now := time.Now()
		for _, el := range cleared {
			u.urls.expect(el.ElicitationID, now)
		}
	}
	return refusal.URLElicitationRequired(cleared)
}

// clearURLElicitation runs one elicitation of a -32042 through the
// request stage as URL mode, and returns it as cleared, or its refusal.
func (p *Proxy) clearURLElicitation(ctx context.Context, x *exchange, raw json.RawMessage) (*mcp.ElicitParams, error) {
	src := p.source(x.u, x.host, x.origin)
	s := pipeline.Describe(src, pipeline.Elicitation, raw)
	if v, ok := p.eng.Screen(ctx, s); !ok {
		return nil, refusal.ForVerdict(pipeline.Elicitation.Name, v)
	}
	var params mcp.ElicitParams
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil, refusal.Internal("elicitation request could not be decoded")
	}
	params.Mode = "url" // what the host is asked to do with it, whatever the upstream wrote
	c, err := p.pipe.Decide(ctx, src, pipeline.Elicitation, &params)
	if err != nil {
		return nil, err
	}
	out, ok := c.Params.(*mcp.ElicitParams)
	if !ok || out.Mode != "url" { // an operator's edit made it a form
		return nil, refusal.Internal("the approved elicitation is not URL mode")
	}
	return out, nil
}

// elicitationComplete relays an upstream's notifications/elicitation/
// complete to its host when the id is one that upstream may complete,
// rebuilt with the id alone (the upstream's _meta stays behind). It goes on
// the host's standalone stream, never a call's: it belongs to no call, and
// a call the upstream answers right after sending it could close its
// stream before the notification is written there.
func (p *Proxy) elicitationComplete(ctx context.Context, u *upstream, req *mcp.ElicitationCompleteNotificationRequest) {
	if req.Params == nil || !u.completesURLs() || !u.urls.take(req.Params.ElicitationID, time.Now()) {
		id := 0
		if req.Params != nil {
			id = len(req.Params.ElicitationID)
		}
		u.log.Debug("elicitation completion dropped: no URL elicitation of this server awaits it", zap.Int("id_bytes", id))
		return
	}
	err := u.link.host.session.NotifyElicitationComplete(hostStream(fromUpstream(ctx, u), true), &mcp.ElicitationCompleteParams{ElicitationID: req.Params.ElicitationID})
	if err != nil {
		u.log.Debug("elicitation completion not relayed", zap.Error(err))
	}
}
