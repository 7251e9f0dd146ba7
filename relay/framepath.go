package relay

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// The frame path. Most of what crosses the firewall is a host's tools/call
// and its answer, which the firewall does not screen: it only gives the
// call an id of its own, takes the server's prefix off the tool's name,
// drops the protocol's _meta keys both ways and maps the progress token.
// Relaying those through the SDK on both sides decodes every frame twice
// and encodes it twice. So over stdio, on both sides, a tools/call and
// what answers it are rewritten on their bytes, one frame at a time
// (hostwire.go reads the host's frames, frameScreen the upstream's), and
// never reach the SDK: the relay writes them to the other side itself.
//
// A frame takes the frame path only when it is exactly what the rewrite
// understands (framepathrequest.go, framepathanswer.go): valid JSON and
// UTF-8, the members the protocol names and no others, no escapes in
// their names. Anything else, and every call the firewall must look into
// (a 2026-07-28 host or upstream, an HTTP side, a traced call), goes the
// full path through the SDK, with the same outcome. An answer the rewrite
// cannot screen is finished the full path's way on its own goroutine
// (answerSlowly).

// frameCalls are the host calls relayed on the frame path to one upstream
// session, by the id and progress token the upstream was given.
type frameCalls struct {
	u     *upstream
	guard guard       // the upstream's raw screen, for answers the rewrite cannot screen
	stdin *childStdin // set when the command starts (attach)

	mu     sync.Mutex
	next   uint64
	calls  map[string]*frameCall // by the id sent upstream
	tokens map[string]*frameCall // by the progress token sent upstream
	ended  bool                  // the session is over: no call starts
}

func newFrameCalls(u *upstream, g guard) *frameCalls {
	return &frameCalls{u: u, guard: g, calls: map[string]*frameCall{}, tokens: map[string]*frameCall{}}
}

// attach gives fc the command's stdin, once it runs.
func (fc *frameCalls) attach(w *childStdin) {
	if fc != nil {
		fc.stdin = w
	}
}

// frameCall is one host tools/call relayed on the frame path.
type frameCall struct {
	host      *hostWire
	u         *upstream
	name      string // the tool, by the upstream's own name
	id        string // the id the upstream was given
	token     string // the progress token it was given, "" when the host asked none
	hostID    []byte // the host's id, as it wrote it
	hostToken []byte // the host's progress token, as it wrote it
	route     *progressRoute
	release   []func()
}

// frameIDPrefix starts the id of every call on the frame path. It never
// collides with the SDK's own ids on the same session, which are numbers;
// an answer whose frame does not contain it is not looked up.
const frameIDPrefix = "mcpx-fw-c"

// frameMark is what every frame the frame path takes from an upstream
// contains: a call's id, or a progress token (progressRoutes' prefix).
var frameMark = []byte(`"mcpx-fw-`)

// open registers c under an id of its own, and its progress token; false
// once the session is over.
func (fc *frameCalls) open(c *frameCall) bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.ended {
		return false
	}
	fc.next++
	c.id = frameIDPrefix + strconv.FormatUint(fc.next, 10)
	fc.calls[c.id] = c
	if c.token != "" {
		fc.tokens[c.token] = c
	}
	return true
}

// take removes and returns the call id names, nil if none is in flight:
// whoever takes a call answers it, once.
func (fc *frameCalls) take(id string) *frameCall {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	c := fc.calls[id]
	if c != nil {
		delete(fc.calls, id)
		delete(fc.tokens, c.token)
	}
	return c
}

// progressOf is the call in flight that was given token.
func (fc *frameCalls) progressOf(token []byte) *frameCall {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.tokens[string(token)]
}

// end answers every call still in flight with the session's end, and
// starts no other.
func (fc *frameCalls) end() {
	if fc == nil {
		return
	}
	fc.mu.Lock()
	fc.ended = true
	calls := fc.calls
	fc.calls, fc.tokens = map[string]*frameCall{}, map[string]*frameCall{}
	fc.mu.Unlock()
	for _, c := range calls {
		c.host.respondError(c.hostID, upstreamError(c.u, errSessionEnded))
		c.done()
	}
}

// took relays frame to its host if it answers, or reports progress on, a
// call in flight on the frame path; false leaves it to the SDK. Only a
// frame that names one of the firewall's ids or tokens is read at all.
func (fc *frameCalls) took(frame []byte) bool {
	if fc == nil || !bytes.Contains(frame, frameMark) {
		return false
	}
	e, ok := readEnvelope(frame)
	switch {
	case !ok || (e.method == nil && !rawjson.PlainString(e.id)):
		return fc.tookUnscreened(frame)
	case e.method != nil: // progress with an id is a request the SDK refuses
		return e.id == nil && string(e.method) == `"notifications/progress"` && fc.progress(e.params)
	}
	c := fc.take(string(e.id[1 : len(e.id)-1]))
	if c == nil {
		return false
	}
	if out, ok := c.reply(e); ok {
		if !c.host.send(out) {
			c.host.respondError(c.hostID, refusal.Internal("answer could not be framed"))
		}
		c.done()
		return true
	}
	go c.answerSlowly(bytes.Clone(frame))
	return true
}

// tookUnscreened finishes the full path's way a call whose answer the
// rewrite cannot even read (invalid UTF-8, say, or an id written with
// escapes): read with the SDK's own decoder, a response to a call in
// flight is answered by answerSlowly. Anything else goes to the SDK as it
// came, which refuses what it cannot decode as it always did.
func (fc *frameCalls) tookUnscreened(frame []byte) bool {
	msg, err := jsonrpc.DecodeMessage(frame)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok {
		return false
	}
	id, _ := resp.ID.Raw().(string)
	c := fc.take(id)
	if c == nil {
		return false
	}
	go c.answerSlowly(bytes.Clone(frame))
	return true
}

// done lets go of what the call held: its place among the upstream's calls
// in flight, its progress route.
func (c *frameCall) done() {
	c.host.forget(c)
	for _, f := range c.release {
		f()
	}
}
