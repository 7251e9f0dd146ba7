package relay

import (
	"context"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
)

// hostCall is a host's tools/call running on an upstream session. A push
// carries nothing that names its call, so the calls in flight are what
// says where a push most likely comes from and which host stream can carry
// it.
type hostCall struct {
	name  string
	ctx   context.Context
	route *progressRoute // nil when its host asked for no progress
}

// track records a call, and its progress route, until the returned func
// is called.
func (u *upstream) track(name string, ctx context.Context, rt *progressRoute) func() {
	c := &hostCall{name: name, ctx: ctx, route: rt}
	u.mu.Lock()
	u.inFlight[c] = struct{}{}
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		delete(u.inFlight, c)
		u.mu.Unlock()
	}
}

// origin names the host call a push most likely belongs to: the only tool
// in flight on this upstream, when there is exactly one.
func (u *upstream) origin() engine.Origin {
	u.mu.Lock()
	defer u.mu.Unlock()
	name := ""
	for c := range u.inFlight {
		if name != "" && c.name != name {
			return engine.Origin{}
		}
		name = c.name
	}
	if name == "" {
		return engine.Origin{}
	}
	return engine.Origin{Method: "tools/call", Name: name}
}

// pushKey marks the context of a push with the upstream it came from.
type pushKey struct{}

// fromUpstream marks ctx as a push from u, so that the host is asked on a
// stream of u's calls (see hostStream).
func fromUpstream(ctx context.Context, u *upstream) context.Context {
	return context.WithValue(ctx, pushKey{}, u)
}

// hostStream is the context to ask the host with. The SDK sends a request
// to an HTTP host on the stream of the host request whose identity the
// context carries, and a legacy host may have no other stream open; so a
// push goes on the stream of a host call in flight on its upstream, chosen
// now, as it is written (the call in flight when the push arrived may have
// ended during its review). Every call on a link's session is that link's
// host's, so any will do. With none, or for undelivered's retry (standalone
// is true), it carries no request's identity and goes on the host's
// standalone stream. Deadline and cancellation stay ctx's, and so do the
// params its upstream sent (withSent) and whether they are what is asked
// (pipeline.Unedited). A context that is not a push's (an
// input request, asked inside its host call) is kept.
func hostStream(ctx context.Context, standalone bool) context.Context {
	u, _ := ctx.Value(pushKey{}).(*upstream)
	if u == nil {
		return ctx
	}
	values := context.Background()
	if call := u.anyCall(); call != nil && !standalone {
		values = call
	}
	return withSent(pipeline.KeepUnedited(valuesOf{Context: ctx, values: values}, ctx), sentIn(ctx))
}

// anyCall is the context of a host call in flight on u, or nil.
func (u *upstream) anyCall() context.Context {
	u.mu.Lock()
	defer u.mu.Unlock()
	for c := range u.inFlight {
		return c.ctx
	}
	return nil
}

// routes are the progress routes of the host calls in flight on u that
// asked for progress.
func (u *upstream) routes() []*progressRoute {
	u.mu.Lock()
	defer u.mu.Unlock()
	var rts []*progressRoute
	for c := range u.inFlight {
		if c.route != nil {
			rts = append(rts, c.route)
		}
	}
	return rts
}

// valuesOf is a context whose values all come from another one, so none of
// its own (an upstream request's identity among them) can misroute what is
// sent with it; its deadline and cancellation stay its own.
type valuesOf struct {
	context.Context
	values context.Context
}

func (c valuesOf) Value(key any) any { return c.values.Value(key) }
