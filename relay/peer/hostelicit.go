package peer

import (
	"context"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 host meets elicitation and roots inside a tool call's
// input_required result, which the SDK's client fulfils itself: through
// ClientOptions.ElicitationHandler (after the SDK's own check of the
// schema, as any host built on it does) and from the client's roots, not
// through the receiving middleware that answers pushes (inputsMiddleware).
// handleInputRequests and addRoots give those the same answers.

// rootsAsked counts the roots/list requests pushed to a host, per host.
type rootsAsked struct{ n atomic.Int64 }

// handleInputRequests answers the elicitations of 2026-07-28 input
// requests with opts.Elicit, recording each on h.Elicited as a push is.
func (h *Host) handleInputRequests(copts *mcp.ClientOptions, opts HostOptions) {
	if opts.Elicit == nil {
		return
	}
	copts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return h.elicit(ctx, opts.Elicit, req.Params)
	}
}

// addRoots gives the client opts.Roots, which it lists for a 2026-07-28
// roots input request, and counts the roots/list requests pushed to it,
// each answered once opts.HoldRoots lets it go.
func (h *Host) addRoots(c *mcp.Client, opts HostOptions) {
	if opts.Roots == nil {
		return
	}
	roots := make([]*mcp.Root, 0, len(opts.Roots))
	for _, uri := range opts.Roots {
		roots = append(roots, &mcp.Root{URI: uri})
	}
	c.AddRoots(roots...)
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				h.roots.n.Add(1)
				if err := waitHeld(ctx, opts.HoldRoots); err != nil {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	})
}

// RootsAsked is how many roots/list requests were pushed to this host. A
// 2026-07-28 roots input request is answered by the SDK inside the tool
// call, without a request of its own, and is not counted.
func (h *Host) RootsAsked() int { return int(h.roots.n.Load()) }

// waitHeld waits until held is closed (nil: not at all) or ctx ends.
func waitHeld(ctx context.Context, held <-chan struct{}) error {
	if held == nil {
		return nil
	}
	select {
	case <-held:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
