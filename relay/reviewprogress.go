package relay

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// A review holds the host call its request belongs to, and a host gives
// up on a call at its own request timeout, however long review.timeout
// is. A host that asked for progress on the call (a progress token) and
// resets its timeout on progress (the TypeScript SDK's
// resetTimeoutOnProgress) keeps waiting while it hears some: so while a
// review holds a call, serve sends the call progress every
// Config.ReviewProgress in which nothing else went to it. A call without a
// token gets nothing: the protocol gives no other way to say "still
// working".
//
// The spec wants a call's progress values to increase. Serve's go a
// thousandth above the last value the host got for the call, so that the
// upstream's own next value most likely still goes up from them; progress
// of the upstream's at or below a value serve sent is not relayed (see
// pass), so the host never sees the sequence go back.

// reviewProgressMessage is the message of serve's progress: what the call
// waits for, nothing of the request.
const reviewProgressMessage = "waiting for review"

// errProgressBehind is an upstream's progress that would not go up from
// what serve already sent for the call.
var errProgressBehind = errors.New("progress at or below a value serve sent for the call")

// progressSent is what the host got of one call's progress.
type progressSent struct {
	mu    sync.Mutex
	last  float64   // the last value sent, the upstream's or serve's
	floor float64   // the last value serve sent of its own, once own
	any   bool      // something was sent
	own   bool      // serve sent some of its own
	at    time.Time // when the last was sent
}

// pass sends the upstream's progress v for rt's call (send), unless serve
// sent its own at or above v. A nil route orders nothing.
func (rt *progressRoute) pass(v float64, send func() error) error {
	if rt == nil {
		return send()
	}
	s := &rt.sent
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own && v <= s.floor {
		return errProgressBehind
	}
	s.last, s.any, s.at = v, true, time.Now()
	return send()
}

// beat sends rt's call progress of serve's own, unless some went to it in
// the last interval every.
func (rt *progressRoute) beat(ctx context.Context, every time.Duration) error {
	s := &rt.sent
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.any && time.Since(s.at) < every {
		return nil
	}
	v := 0.0
	if s.any {
		v = above(s.last)
	}
	s.last, s.floor, s.any, s.own, s.at = v, v, true, true, time.Now()
	return rt.host.NotifyProgress(valuesOf{Context: ctx, values: rt.ctx},
		&mcp.ProgressNotificationParams{ProgressToken: rt.token, Progress: v, Message: reviewProgressMessage})
}

// above is a value a thousandth above v, rounded to thousandths, or the
// next number above v where a thousandth is too small to count.
func above(v float64) float64 {
	next := math.Round((v+0.001)*1000) / 1000
	if next <= v {
		next = math.Nextafter(v, math.Inf(1))
	}
	return next
}

// routeKey carries, in a host call's context, the progress route of the
// call (when its host asked for progress).
type routeKey struct{}

// withRoute marks ctx as the context of the host call rt belongs to.
func withRoute(ctx context.Context, rt *progressRoute) context.Context {
	if rt == nil {
		return ctx
	}
	return context.WithValue(ctx, routeKey{}, rt)
}

// heldCalls are the host calls a request waiting on a review holds, by
// the routes of those that asked for progress: a request made inside a
// host call (an input request, a bridged push, an answer checked on a
// retry) holds that call; a push, which names no call, every tools/call in
// flight on its upstream (see hostStream), since any of them may be the
// one that waits on it.
func heldCalls(ctx context.Context) []*progressRoute {
	if u, _ := ctx.Value(pushKey{}).(*upstream); u != nil {
		return u.routes()
	}
	if rt, _ := ctx.Value(routeKey{}).(*progressRoute); rt != nil {
		return []*progressRoute{rt}
	}
	return nil
}

// holdCalls is the pipeline's Source.Hold: while a review holds the
// request whose context is ctx, the calls it holds get progress every
// Config.ReviewProgress; 0 sends none.
func (p *Proxy) holdCalls(ctx context.Context) func() {
	every := p.cfg.ReviewProgress
	if every <= 0 {
		return func() {}
	}
	k := &keepAlive{p: p, ctx: ctx, every: every}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.timer = time.AfterFunc(every, k.tick)
	return k.stop
}

// keepAlive is one review's wait, sending progress on a timer of its own
// rather than a goroutine: a thousand reviews pending keep a thousand
// timers, not a thousand stacks.
type keepAlive struct {
	p     *Proxy
	ctx   context.Context
	every time.Duration

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// tick sends each held call its progress, and sets the next tick. It
// sends without k's lock: a host that stops reading blocks the tick, never
// the end of the review's wait (stop).
func (k *keepAlive) tick() {
	if k.over() {
		return
	}
	for _, rt := range heldCalls(k.ctx) {
		if err := rt.beat(k.ctx, k.every); err != nil {
			k.p.log.Debug("progress for a review's call not sent", zap.Error(err))
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.stopped {
		k.timer.Reset(k.every)
	}
}

// over reports whether the wait has ended, or its request has.
func (k *keepAlive) over() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.stopped || k.ctx.Err() != nil
}

// stop ends the ticks once the review's wait is over.
func (k *keepAlive) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	k.timer.Stop()
}
