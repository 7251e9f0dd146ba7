package relay

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostView is one host as a sampling request sees it: the session that can
// be asked (nil when only input_required results can reach it), its
// protocol revision and what it declared. A host that initialized
// (revisions up to 2025-11-25) has one view for its whole session; a
// 2026-07-28 host declares itself on every request.
type hostView struct {
	session *mcp.ServerSession
	// key names the host session in the limits (hostKey): given by newLink
	// to a link whose view has a session, one per link.
	key  string
	era  string
	caps *mcp.ClientCapabilities
	// declared holds what the host declared as the engine reads it
	// (engine.Host), for a view that serves many requests (newLink), made
	// on first use and shared by them, and for a view narrowed to one
	// upstream (offeredTo). Nil for a view made per request.
	declared *declaredCaps
}

// declaredCaps is capabilities as the engine reads them, made once from
// what the host declared (of), even for a view narrowed to what one
// upstream was offered (offeredTo); nobody may modify the map.
type declaredCaps struct {
	once sync.Once
	of   *mcp.ClientCapabilities
	m    map[string]any
}

// capabilities is what h declared, as the engine reads it.
func (h hostView) capabilities() map[string]any {
	if h.declared == nil {
		return jsonObject(h.caps)
	}
	h.declared.once.Do(func() { h.declared.m = jsonObject(h.declared.of) })
	return h.declared.m
}

// canSample reports whether the host declared sampling.
func (h hostView) canSample() bool { return h.caps != nil && h.caps.Sampling != nil }

// modern reports whether the host speaks 2026-07-28 or later, and so can
// only be asked for a completion through an input_required result.
func (h hostView) modern() bool { return isModern(h.era) }

// hostKeys numbers the host sessions' links, for hostKey.
var hostKeys atomic.Uint64

// hostKey is the host session h stands for in the limits: its link's key,
// or "" for every 2026-07-28 request (such hosts have no session, so they
// share one).
func hostKey(h hostView) string {
	if h.session == nil || h.modern() {
		return ""
	}
	return h.key
}

// link is a set of upstream sessions and the host they serve. Each host
// session that initializes gets its own link, with upstream sessions at its
// revision offered only what it can answer (upstream sessions are per
// host session). Every 2026-07-28 request, which carries its own
// revision and capabilities, shares the one modern link.
type link struct {
	host hostView
	// shared marks the one link of every 2026-07-28 request. Its sessions to
	// upstreams that push are offered sampling, so that tools a server
	// registers only for sampling clients are listed; but a push on them
	// belongs to no host call (a bridged call has its own session), so it
	// is refused unless an operator answers for that server.
	shared bool
	// bridge is set on the link of one bridged call's own session: that
	// session's pushes go to the call, never to a host (bridge.go).
	bridge *bridgeSlot
	// gone ends when the host's session ends, so that sampling requests
	// still waiting (on a review, on the host) stop at once and their
	// reviews are abandoned, instead of holding shutdown until expiry.
	gone      context.Context
	leave     context.CancelFunc // ends gone
	closeOnce sync.Once

	// start serialises starting the upstreams; started is set once they
	// run (see Proxy.started).
	start   sync.Mutex
	started atomic.Bool

	mu sync.Mutex
	// upstreams has a place per configured server, in the config's order,
	// up or down (down.go); a restart replaces a place's upstream
	// (restart.go), copying the list.
	upstreams []*upstream
	// prefixAll makes names carry their server's prefix however many
	// upstreams run: the operator asked for it (Config.PrefixNames), or
	// several are configured. Set with upstreams.
	prefixAll bool
	// restarting names the servers being started again (restartLater).
	restarting map[string]bool

	// resources says which upstream listed which URI and template, so a
	// request about a resource goes to its owner only (owners.go).
	resources resourceIndex

	// rootsNotices relays the host's roots list changes (rootschanged.go).
	rootsNotices rootsNotices
}

func newLink(h hostView) *link {
	if h.caps == nil {
		h.caps = &mcp.ClientCapabilities{}
	}
	if h.session != nil {
		h.key = "host-" + strconv.FormatUint(hostKeys.Add(1), 10)
	}
	h.declared = &declaredCaps{of: h.caps}
	gone, leave := context.WithCancel(context.Background())
	return &link{host: h, gone: gone, leave: leave}
}

// whileAlive derives a context that also ends when the link's host leaves.
// It registers a callback rather than starting a goroutine: a request held
// for review may wait for minutes, and a thousand of them each holding a
// goroutine's stack for this cost megabytes (BENCHMARKS.md, P4).
func (l *link) whileAlive(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(l.gone, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// close ends waits first, then the upstream sessions.
func (l *link) close() {
	l.closeOnce.Do(func() {
		l.leave()
		l.mu.Lock()
		ups := l.upstreams
		l.upstreams = nil
		l.mu.Unlock()
		for _, u := range ups {
			u.close()
		}
	})
}

func (l *link) upstreamList() []*upstream {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.upstreams
}

// nameSep joins a server name and a tool or prompt name when several
// upstreams share the host, so names from different servers cannot collide,
// or always when the operator asked for names that stay the same however
// many servers there are (Config.PrefixNames).
const nameSep = "__"

// prefixed reports whether the host sees names with their server's prefix,
// and the upstreams they are routed among.
func (l *link) prefixed() (bool, []*upstream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.prefixAll || len(l.upstreams) != 1, l.upstreams
}

// exposed is the name the host sees for an upstream's tool or prompt.
func (l *link) exposed(u *upstream, name string) string {
	if prefixed, _ := l.prefixed(); !prefixed {
		return name
	}
	return u.cfg.Name + nameSep + name
}

// route finds the upstream and its own name for a name the host used.
func (l *link) route(name string) (*upstream, string, error) {
	prefixed, ups := l.prefixed()
	if !prefixed {
		return ups[0], name, nil
	}
	for _, u := range ups {
		if rest, ok := strings.CutPrefix(name, u.cfg.Name+nameSep); ok {
			return u, rest, nil
		}
	}
	return nil, "", refusal.UnknownName()
}

// only returns the upstream when there is exactly one and it is up.
func (l *link) only() (*upstream, bool) {
	ups := l.upstreamList()
	if len(ups) != 1 || ups[0].isDown() {
		return nil, false
	}
	return ups[0], true
}

// offering lists the upstreams up whose declared capabilities pass has.
func (l *link) offering(has func(*mcp.ServerCapabilities) bool) []*upstream {
	var out []*upstream
	for _, u := range l.upstreamList() {
		if u.isDown() {
			continue
		}
		if c := u.session.InitializeResult().Capabilities; c != nil && has(c) {
			out = append(out, u)
		}
	}
	return out
}

// mergedCapabilities offers the host what any upstream offers (see
// mergeCapabilities); while one is down, everything the firewall relays,
// list changes included, since what it offers is not known until it
// starts.
func (l *link) mergedCapabilities() *mcp.ServerCapabilities {
	var all []*mcp.ServerCapabilities
	for _, u := range l.upstreamList() {
		if u.isDown() {
			all = append(all, relayedCapabilities())
			continue
		}
		all = append(all, u.session.InitializeResult().Capabilities)
	}
	return mergeCapabilities(all)
}
