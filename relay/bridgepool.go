package relay

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// bridgePool keeps the firewall's bridged calls: each one's place under
// limits.max_bridged_calls and limits.max_bridged_calls_per_server from
// its admission until its session is closed, the parked ones by id for
// their hosts' retries, and every bridged session not closed yet, so that
// shutdown closes them all.
//
// The place is held until the session is closed, not only while the call
// runs or waits: the limits bound the processes an upstream has the
// firewall run, and a process that outlives its call (the grace after its
// result, a server slow to exit or deaf to SIGTERM, which closing waits
// out, SIGTERM and then SIGKILL, for up to 15 s) is still one of them. Given back at the end
// of the call, a hostile server's places would let the host's next calls
// start processes while the last ones still ran, as many as the host
// calls in those seconds.
//
// It keeps no idle sessions: a bridged session serves one call (see
// bridge). Reuse would save the upstream's start: a bridged tools/call of
// an echo tool took a median 1.0 ms on a reused session and 5.9 ms on a
// new one for the Go test upstream, 1.0 ms and 212 ms for the Node
// everything-server (40 calls each, 2 shared cores). But an upstream may
// push at any time after its call answered, from work the call left
// running, and on a reused session that push cannot be told from the next
// call's: no quiet period before reuse is long enough for every such push.
type bridgePool struct {
	mu     sync.Mutex
	calls  map[string]int // running or parked, by server
	total  int
	parked map[string]*bridge
	live   map[*bridge]struct{} // sessions not closed yet
	closed bool
	// metrics counts the calls the pool's limits refuse; nil counts none.
	metrics *telemetry.Metrics
}

// admit takes a place for one more bridged call to server, or refuses it
// at once when perServer calls to it, or overall calls to all servers,
// are running or parked. The returned func gives the place back; calling
// it again does nothing.
func (bp *bridgePool) admit(server string, perServer, overall int) (func(), error) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	switch {
	case bp.closed:
		return nil, refusal.ShuttingDown()
	case bp.calls[server] >= perServer:
		bp.metrics.Refused(server, "limits.max_bridged_calls_per_server")
		return nil, refusal.BridgeLimit(server, "limits.max_bridged_calls_per_server", perServer)
	case bp.total >= overall:
		bp.metrics.Refused(server, "limits.max_bridged_calls")
		return nil, refusal.BridgeLimit(server, "limits.max_bridged_calls", overall)
	}
	if bp.calls == nil {
		bp.calls = map[string]int{}
	}
	bp.calls[server]++
	bp.total++
	var once sync.Once
	return func() { once.Do(func() { bp.leave(server) }) }, nil
}

func (bp *bridgePool) leave(server string) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	bp.total--
	if bp.calls[server]--; bp.calls[server] == 0 {
		delete(bp.calls, server)
	}
}

// track records b's session until closeSession; false after closeAll,
// when the caller must close it itself.
func (bp *bridgePool) track(b *bridge) bool {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.closed {
		return false
	}
	if bp.live == nil {
		bp.live = map[*bridge]struct{}{}
	}
	bp.live[b] = struct{}{}
	return true
}

// closeSession closes b's upstream session, its one call over, and then,
// its process gone, gives the call's place back.
func (bp *bridgePool) closeSession(b *bridge) {
	b.u.close()
	b.release()
	bp.mu.Lock()
	delete(bp.live, b)
	bp.mu.Unlock()
}

// sessions counts the bridged sessions not closed yet.
func (bp *bridgePool) sessions() int {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return len(bp.live)
}

// park keeps b for its host's retry, and starts its expiry: after ttl,
// expire runs if nothing took b out first. The timer is set under the
// pool's lock, before b can be found, so whoever takes b out (a retry,
// the expiry, closeAll) finds it set. After closeAll park keeps nothing
// and reports false: the caller fails the call as shutdown does.
func (bp *bridgePool) park(b *bridge, ttl time.Duration, expire func()) bool {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.closed {
		return false
	}
	if bp.parked == nil {
		bp.parked = map[string]*bridge{}
	}
	bp.parked[b.id] = b
	b.timer = time.AfterFunc(ttl, expire)
	return true
}

// unpark takes the bridge out, so a retry and an expiry never both act.
func (bp *bridgePool) unpark(id string) *bridge {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	b := bp.parked[id]
	delete(bp.parked, id)
	return b
}

// peek is the parked bridge id, left parked; nil when none is.
func (bp *bridgePool) peek(id string) *bridge {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return bp.parked[id]
}

// parking reports whether any call is parked, and false after closeAll.
func (bp *bridgePool) parking() bool {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return len(bp.parked) > 0
}

// stopped reports whether closeAll ran.
func (bp *bridgePool) stopped() bool {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return bp.closed
}

// closeAll ends every parked call, closes every bridged session and
// refuses bridged calls from then on.
func (bp *bridgePool) closeAll(p *Proxy) {
	bp.mu.Lock()
	bp.closed = true
	parked, live := bp.parked, slices.Collect(maps.Keys(bp.live))
	bp.parked = nil
	bp.mu.Unlock()
	for _, b := range parked {
		b.timer.Stop()
		p.abortBridge(b, refusal.ShuttingDown())
	}
	for _, b := range live {
		bp.closeSession(b)
	}
}

// Defaults of the bridge's limits (limits.max_bridged_calls,
// limits.max_bridged_calls_per_server, limits.bridge_wait).
//
// The wait is shorter than sampling.host_timeout (5m), which bounds a
// push to an older host: a 2026-07-28 host retries as soon as its model
// has answered, which takes seconds to tens of seconds, so a minute
// covers a slow completion, while a host that never retries holds a
// process per call only that long. A host that asks a person first may
// need more: raise the wait (up to sampling.host_timeout).
const (
	DefaultMaxBridged          = 64
	DefaultMaxBridgedPerServer = 16
	DefaultBridgeWait          = time.Minute
)

// bridgeDefaults fills in the bridge's limits left unset.
func bridgeDefaults(cfg Config) Config {
	cfg.MaxBridged = orDefault(cfg.MaxBridged, DefaultMaxBridged)
	cfg.MaxBridgedPerServer = orDefault(cfg.MaxBridgedPerServer, DefaultMaxBridgedPerServer)
	cfg.BridgeWait = orDefault(cfg.BridgeWait, DefaultBridgeWait)
	return cfg
}
