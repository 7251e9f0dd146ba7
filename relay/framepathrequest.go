package relay

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// toolCall is the members of a host's tools/call params the frame path
// relays, as raw values.
type toolCall struct {
	name, args, meta, token []byte
}

// readToolCall reads params: a name without escapes, and arguments and
// _meta (an object) if present; any other member (a 2026-07-28 host's
// inputResponses or requestState, say) leaves the call to the full path.
// token is _meta's progressToken, a string without escapes or an integer.
// A _meta naming a protocol version makes the call, to the SDK, one of that
// revision whatever the session's (a 2026-07-28 one is checked for what it
// declares and served on that revision's link): the full path's to screen.
func readToolCall(params []byte) (toolCall, bool) {
	var c toolCall
	ok := rawjson.ReadMembers(params, func(name []byte) *[]byte {
		switch string(name) {
		case "name":
			return &c.name
		case "arguments":
			return &c.args
		case "_meta":
			return &c.meta
		}
		return nil
	})
	if !ok || !rawjson.PlainString(c.name) || (c.meta != nil && !rawjson.IsObject(c.meta)) {
		return c, false
	}
	if c.meta != nil && !rawjson.EachMember(c.meta, func(name, v []byte) bool {
		if string(name) == "progressToken" {
			c.token = v
		}
		return string(name) != mcp.MetaKeyProtocolVersion
	}) {
		return c, false
	}
	return c, c.token == nil || hostCallID(c.token)
}

// hostCallID reports whether an id (or progress token) is one the frame
// path echoes as the host wrote it: a string without escapes, or an
// integer.
func hostCallID(v []byte) bool { return rawjson.PlainString(v) || rawjson.Integer(v) }

// callTool relays a host's tools/call on the frame path, and reports
// whether it did. It does what the full path's callTool does for a host
// and an upstream that both speak a revision before 2026-07-28 over
// stdio: route by name, track the call, map its progress token, scrub its
// _meta, and send it with an id of the firewall's.
func (h *hostWire) callTool(frame []byte) bool {
	e, ok := readEnvelope(frame)
	if !ok || string(e.method) != `"tools/call"` || !hostCallID(e.id) || e.params == nil {
		return false
	}
	req, ok := readToolCall(e.params)
	if !ok {
		return false
	}
	l := h.link()
	if l == nil {
		return false
	}
	u, name, err := l.route(string(req.name[1 : len(req.name)-1]))
	if err != nil || !u.onFramePath() {
		return false
	}
	c := &frameCall{host: h, u: u, name: name, hostID: bytes.Clone(e.id)}
	if !h.claim(c) {
		return false
	}
	if !h.routeProgress(c, req.token) || !u.framePath.open(c) {
		c.done()
		return false
	}
	c.release = append(c.release, u.track(name, context.Background(), c.route))
	out, ok := toolCallFrame(c, req)
	if !ok || !u.framePath.stdin.tryWrite(out) {
		if u.framePath.take(c.id) == nil {
			return true // the session ended meanwhile, and end answered the host
		}
		c.done()
		return false
	}
	return true
}

// routeProgress gives c a progress token of the firewall's when the host
// asked for progress (progressRoutes, as the full path does): progress the
// frame path cannot relay on its bytes then reaches the host through the
// SDK's handler.
func (h *hostWire) routeProgress(c *frameCall, token []byte) bool {
	if token == nil {
		return true
	}
	var v any
	if json.Unmarshal(token, &v) != nil {
		return false
	}
	rt, unroute := h.p.progress.route(context.Background(), h.session.Load(), v)
	c.release = append(c.release, unroute)
	ours, _ := rt.on(c.u.session).(string)
	c.token, c.hostToken, c.route = ours, bytes.Clone(token), rt
	return ours != ""
}

// toolCallFrame is the tools/call the upstream gets: the firewall's id,
// the upstream's own name of the tool, the host's arguments as written,
// and the host's _meta without the protocol's keys, with the firewall's
// progress token (upstreamMeta); false for a _meta that names a key
// twice, whose meaning is the decoder's choice.
func toolCallFrame(c *frameCall, req toolCall) ([]byte, bool) {
	b := make([]byte, 0, len(req.args)+len(req.meta)+len(c.name)+128)
	b = append(b, `{"jsonrpc":"2.0","id":"`...)
	b = append(b, c.id...)
	b = append(b, `","method":"tools/call","params":{"name":"`...)
	b = append(b, c.name...)
	b = append(b, '"')
	if req.args != nil {
		b = append(b, `,"arguments":`...)
		b = append(b, req.args...)
	}
	b, ok := appendScrubbedMeta(b, req.meta, c.token)
	return append(b, "}}\n"...), ok
}

// cancel passes a host's notifications/cancelled for a call on the frame
// path to its upstream, under the firewall's id, and forgets the call (the
// host expects no answer to it). The host's reason stays with the host.
func (h *hostWire) cancel(frame []byte) bool {
	e, ok := readEnvelope(frame)
	if !ok || string(e.method) != `"notifications/cancelled"` || e.id != nil || e.params == nil {
		return false
	}
	var id []byte
	if !rawjson.EachMember(e.params, func(name, v []byte) bool {
		if string(name) == "requestId" {
			id = v
		}
		return true
	}) || id == nil {
		return false
	}
	c := h.inFlight(id)
	if c == nil || c.u.framePath.take(c.id) == nil {
		return false
	}
	b := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + c.id + `"}}` + "\n")
	if !c.u.framePath.stdin.tryWrite(b) {
		go func() { _, _ = c.u.framePath.stdin.Write(b) }()
	}
	c.done()
	return true
}
