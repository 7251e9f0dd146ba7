package relay

import (
	"context"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// hostCall is a host's tools/call running on an upstream session. A push
// carries nothing that names its call, so the calls in flight are what
// says where a push most likely comes from and which host stream can carry
// it.
type hostCall struct {
	name string
	ctx  context.Context
}

// track records a call until the returned func is called.
func (u *upstream) track(name string, ctx context.Context) func() {
	c := &hostCall{name: name, ctx: ctx}
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

// onHostStream lets a push reach the host the way a request made inside
// the host's call would: the SDK sends a request to an HTTP host on the
// stream of the request whose identity the context carries, and a legacy
// host may have no other stream open. Deadline and cancellation stay the
// push's own. Every call in flight on a link's session is that link's
// host's, so any of them will do.
func (u *upstream) onHostStream(ctx context.Context) context.Context {
	u.mu.Lock()
	defer u.mu.Unlock()
	for c := range u.inFlight {
		return withValuesOf{Context: ctx, values: c.ctx}
	}
	return ctx
}

// withValuesOf is a context whose values come first from another one.
type withValuesOf struct {
	context.Context
	values context.Context
}

func (c withValuesOf) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}
