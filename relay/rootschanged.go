package relay

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// rootsChanged relays a host's notifications/roots/list_changed to the
// upstreams of that host's session that were offered roots with
// listChanged: never to another host's, nor to one told the list would
// not change (or not told of roots at all). A 2026-07-28 upstream is
// offered roots per request and the revision has no such notification, so
// it gets none; neither does a session that has not started. The sending
// happens beside the host's session (see rootsNotices).
func (p *Proxy) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	p.mu.Lock()
	l := p.links[req.Session]
	p.mu.Unlock()
	if l == nil {
		return
	}
	l.rootsNotices.changed(func() {
		ctx, cancel := l.whileAlive(context.Background())
		defer cancel()
		ctx, stop := context.WithTimeout(ctx, rootsNoticeTimeout)
		defer stop()
		for _, u := range l.upstreamList() {
			if u.modern() || u.offered == nil || u.offered.RootsV2 == nil || !u.offered.RootsV2.ListChanged {
				continue
			}
			if err := u.notifyRootsChanged(ctx); err != nil {
				u.log.Debug("roots list_changed not relayed", zap.Error(err))
			}
		}
	})
}

// rootsNoticeTimeout bounds one round of roots notifications.
const rootsNoticeTimeout = 10 * time.Second

// rootsNotices sends one link's roots notifications, one round at a time
// beside the host's session: an upstream that stops reading then stalls
// only these, never the host's other messages (the SDK handles a
// session's notifications one after another). A change that comes while
// a round is being sent makes one more round, not one per change: the
// notification says only that the list changed.
type rootsNotices struct {
	mu             sync.Mutex
	sending, again bool
}

func (n *rootsNotices) changed(send func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sending {
		n.again = true
		return
	}
	n.sending = true
	go func() {
		for {
			send()
			n.mu.Lock()
			if !n.again {
				n.sending = false
				n.mu.Unlock()
				return
			}
			n.again = false
			n.mu.Unlock()
		}
	}()
}

// rootsChangedKey marks the context of notifyRootsChanged's send.
type rootsChangedKey struct{}

// notifyRootsChanged sends notifications/roots/list_changed on u's
// session. The SDK sends it only from Client.AddRoots and RemoveRoots,
// which change the client's own list of roots (one the firewall never
// serves: an upstream's roots come from its host); so the notification
// goes out as a progress notification marked in its context, which
// sendRootsChanged, on u's client's sending side, turns into this one.
func (u *upstream) notifyRootsChanged(ctx context.Context) error {
	return u.session.NotifyProgress(context.WithValue(ctx, rootsChangedKey{}, true), &mcp.ProgressNotificationParams{})
}

// sendRootsChanged is the sending middleware of every upstream client: a
// send marked by notifyRootsChanged leaves as
// notifications/roots/list_changed, with empty params; everything else
// passes unchanged.
func sendRootsChanged(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cs, ok := req.GetSession().(*mcp.ClientSession)
		if !ok || method != "notifications/progress" || ctx.Value(rootsChangedKey{}) == nil {
			return next(ctx, method, req)
		}
		return next(ctx, "notifications/roots/list_changed", &mcp.ClientRequest[*mcp.RootsListChangedParams]{Session: cs, Params: &mcp.RootsListChangedParams{}})
	}
}
