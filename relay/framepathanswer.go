package relay

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
)

// errSessionEnded is why a call on the frame path failed when its
// upstream session ended before answering it.
var errSessionEnded = errors.New("upstream session ended")

// envelope is the members of one JSON-RPC frame, as raw values.
type envelope struct {
	id, method, params, result, error []byte
}

// readEnvelope reads frame's members, refusing what the frame path does
// not relay on its bytes: invalid JSON or UTF-8 (the SDK would refuse the
// first and repair the second, so neither reaches the other side as it
// was written), a jsonrpc other than "2.0", a repeated or unknown member,
// and a name with an escape in it.
func readEnvelope(frame []byte) (envelope, bool) {
	if !json.Valid(frame) || !utf8.Valid(frame) {
		return envelope{}, false
	}
	var e envelope
	var version []byte
	ok := rawjson.ReadMembers(frame, func(name []byte) *[]byte {
		switch string(name) {
		case "jsonrpc":
			return &version
		case "id":
			return &e.id
		case "method":
			return &e.method
		case "params":
			return &e.params
		case "result":
			return &e.result
		case "error":
			return &e.error
		}
		return nil
	})
	return e, ok && string(version) == `"2.0"`
}

// reply is the frame the host gets for the upstream's answer e, rewritten
// on its bytes; false when the rewrite cannot screen it.
func (c *frameCall) reply(e envelope) ([]byte, bool) {
	b := make([]byte, 0, len(e.result)+len(e.error)+len(c.hostID)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, c.hostID...)
	var ok bool
	switch {
	case e.result != nil && e.error == nil:
		b = append(b, `,"result":`...)
		b, ok = appendToolResult(b, e.result)
	case e.error != nil && e.result == nil:
		b = append(b, `,"error":`...)
		b, ok = appendPassedError(b, e.error)
	}
	return append(b, "}\n"...), ok
}

// appendToolResult appends a tools/call result as the full path rebuilds
// it for a host (hostToolResult): its content, structuredContent and
// isError as the upstream wrote them, and its _meta without the protocol's
// keys. A result with any other member (resultType and inputRequests
// among them, which the guard must screen), or with one of these of the
// wrong kind, is not screened here.
func appendToolResult(b, result []byte) ([]byte, bool) {
	var content, structured, isError, meta []byte
	ok := rawjson.ReadMembers(result, func(name []byte) *[]byte {
		switch string(name) {
		case "content":
			return &content
		case "structuredContent":
			return &structured
		case "isError":
			return &isError
		case "_meta":
			return &meta
		}
		return nil
	})
	if !ok || !plainContent(content) || (isError != nil && string(isError) != "true" && string(isError) != "false") ||
		(meta != nil && !rawjson.IsObject(meta)) {
		return b, false
	}
	b = append(b, `{"content":`...)
	b = append(b, content...)
	if structured != nil && string(structured) != "null" {
		b = append(b, `,"structuredContent":`...)
		b = append(b, structured...)
	}
	if string(isError) == "true" {
		b = append(b, `,"isError":true`...)
	}
	if b, ok = appendScrubbedMeta(b, meta, ""); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// plainContent reports whether content is an array of items the SDK
// decodes as they are written: objects whose type, named exactly so, once
// and never in another case, is one a tool result carries. An item the SDK
// would refuse, or a tool_use or tool_result (whose nested content it
// reads too), is left to the full path, so the host never gets content
// the firewall's own decoder refuses; so is one that names its type twice,
// which a host may read by the type this check did not.
func plainContent(content []byte) bool {
	return rawjson.EachElement(content, func(item []byte) bool {
		var kind []byte
		return rawjson.EachMember(item, func(name, v []byte) bool {
			switch {
			case string(name) == "type" && kind != nil:
				return false
			case string(name) == "type":
				kind = v
			case strings.EqualFold(string(name), "type"):
				return false
			}
			return true
		}) && contentTypes[string(kind)]
	})
}

// contentTypes are the item types plainContent lets through, as written.
var contentTypes = map[string]bool{`"text"`: true, `"image"`: true, `"audio"`: true, `"resource_link"`: true, `"resource"`: true}

// appendScrubbedMeta appends `,"_meta":{...}` with meta's members but the
// protocol's own and progressToken (scrubMeta on bytes), and the
// firewall's progress token when token is not "" (upstreamMeta); nothing
// when no member is left.
func appendScrubbedMeta(b, meta []byte, token string) ([]byte, bool) {
	start, n := len(b), 0
	b = append(b, `,"_meta":{`...)
	var seen map[string]bool
	ok := meta == nil || rawjson.EachMember(meta, func(name, v []byte) bool {
		key := string(name)
		if seen[key] {
			return false // which of two the other side keeps is its decoder's choice
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[key] = true
		if strings.HasPrefix(key, "io.modelcontextprotocol/") || key == "progressToken" {
			return true
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = append(b, v...)
		return true
	})
	if !ok {
		return b[:start], false
	}
	if token != "" {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `"progressToken":"`+token+`"`...)
	}
	if n == 0 {
		return b[:start], true
	}
	return append(b, '}'), true
}

// appendPassedError appends the upstream's JSON-RPC error as it wrote it
// (refusal.PassedThrough): an integer code, a string message, any data, nothing
// else. A -32042 is not screened here: its URL elicitations are decided
// first (callError).
func appendPassedError(b, werr []byte) ([]byte, bool) {
	var code, message, data []byte
	ok := rawjson.ReadMembers(werr, func(name []byte) *[]byte {
		switch string(name) {
		case "code":
			return &code
		case "message":
			return &message
		case "data":
			return &data
		}
		return nil
	})
	if !ok || !rawjson.Integer(code) || len(message) == 0 || message[0] != '"' || string(code) == "-32042" {
		return b, false
	}
	return append(b, werr...), true
}

// progress relays an upstream's progress on a call in flight to its host,
// with the host's own token (relayProgress on bytes): progress, total and
// message pass, nothing else. False leaves the frame to the SDK, whose
// handler relays what it can decode of it.
func (fc *frameCalls) progress(params []byte) bool {
	var token, progress, total, message []byte
	ok := rawjson.EachMember(params, func(name, v []byte) bool {
		var slot *[]byte
		switch string(name) {
		case "progressToken":
			slot = &token
		case "progress":
			slot = &progress
		case "total":
			slot = &total
		case "message":
			slot = &message
		default:
			return true // _meta among them: the full path drops it too
		}
		if *slot != nil {
			return false
		}
		*slot = v
		return true
	})
	if !ok || !rawjson.PlainString(token) || !isNumber(progress) || (total != nil && !isNumber(total)) ||
		(message != nil && message[0] != '"') {
		return false
	}
	c := fc.progressOf(token[1 : len(token)-1])
	if c == nil {
		return false
	}
	v, _ := strconv.ParseFloat(string(progress), 64) // isNumber's
	b := make([]byte, 0, len(params)+len(c.hostToken)+64)
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, c.hostToken...)
	b = append(b, `,"progress":`...)
	b = append(b, progress...)
	for _, m := range []struct {
		name string
		v    []byte
	}{{"total", total}, {"message", message}} {
		if m.v != nil {
			b = append(b, `,"`+m.name+`":`...)
			b = append(b, m.v...)
		}
	}
	err := c.route.pass(v, func() error {
		c.host.send(append(b, "}}\n"...))
		return nil
	})
	if err != nil {
		fc.u.log.Debug("progress not relayed", zap.Error(err))
	}
	return true
}

// isNumber reports whether a valid JSON value is a number a float64 holds:
// the SDK refuses one past its range, and the full path drops its frame.
func isNumber(v []byte) bool {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return false
	}
	_, err := strconv.ParseFloat(string(v), 64)
	return err == nil
}

// answerSlowly answers the call with an upstream frame the rewrite could
// not screen, the way the full path answers it: the guard screens it as it
// screens every response, a -32042 has its URL elicitations decided, and
// a result is decoded into the SDK's type and rebuilt.
func (c *frameCall) answerSlowly(frame []byte) {
	defer c.done()
	res, err := c.slowAnswer(frame)
	if err != nil {
		c.host.respondError(c.hostID, err)
		return
	}
	c.host.respondResult(c.hostID, res)
}

func (c *frameCall) slowAnswer(frame []byte) (mcp.Result, error) {
	msg, err := jsonrpc.DecodeMessage(frame)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok {
		c.u.log.Warn("upstream answer unreadable", zap.Int("bytes", len(frame)))
		return nil, refusal.UpstreamFailed(c.u.cfg.Name)
	}
	ctx, cancel := c.u.link.whileAlive(context.Background())
	defer cancel()
	if j := c.u.framePath.guard.screenMessage(ctx, resp); j.replace != nil {
		resp = j.replace
	}
	if resp.Error != nil {
		x := &exchange{u: c.u, host: c.u.link.host.offeredTo(c.u.cfg), origin: engine.Origin{Method: "tools/call", Name: c.name}}
		return nil, c.host.p.callError(ctx, x, resp.Error)
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return nil, upstreamError(c.u, err)
	}
	return hostToolResult(c.u.link.host, &r)
}
