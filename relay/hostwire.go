package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// hostWire is a host's stdio stream, between it and the firewall's SDK
// server: its frames are read here first (rawjson.Splitter), so that the
// host's tools/calls can take the frame path (framepath.go), and
// everything written to the host, the SDK's frames and the frame path's,
// goes through one lock, a whole frame per write.
type hostWire struct {
	*rawjson.Splitter
	p   *Proxy
	in  io.ReadCloser
	out io.WriteCloser

	writing sync.Mutex // one frame at a time to out

	session atomic.Pointer[mcp.ServerSession] // the SDK's session with this host
	linked  atomic.Pointer[link]              // its link, once its upstreams run
	ready   atomic.Bool                       // the host sent notifications/initialized

	mu    sync.Mutex
	calls map[string]*frameCall // on the frame path, by the host's id as the SDK reads it (idKey)
	idle  chan struct{}         // closed when calls empties, for drain
}

func newHostWire(p *Proxy, in io.ReadCloser, out io.WriteCloser) *hostWire {
	h := &hostWire{p: p, in: in, out: out, calls: map[string]*frameCall{}}
	h.Splitter = rawjson.NewSplitter(in, h.pick)
	return h
}

// transport is the SDK's connection to the host over h.
func (h *hostWire) transport() mcp.Transport {
	return &mcp.IOTransport{Reader: h, Writer: hostWriter{h}}
}

// Close closes the host's input.
func (h *hostWire) Close() error { return h.in.Close() }

// hostWriter is the one writer to the host: the SDK's stdio connection
// writes through it, and the frame path (send), under one lock. Each
// write is one message and its '\n' (the SDK's connection writes each so),
// and leaves under the framing rule (framing.go): as one line of compact
// JSON, or not at all. The SDK's frames are valid JSON by construction
// (its encoder checks every raw value), so the rule refuses only what no
// path should make; to the SDK a refusal is a broken pipe, which ends the
// session's calls.
type hostWriter struct{ h *hostWire }

func (w hostWriter) Write(b []byte) (int, error) {
	line, err := oneLine(b)
	if err != nil {
		w.h.p.log.Error("a frame to the host broke the framing rule and was not written", zap.Int("bytes", len(b)))
		return 0, err
	}
	w.h.writing.Lock()
	defer w.h.writing.Unlock()
	if _, err := w.h.out.Write(line); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w hostWriter) Close() error { return w.h.out.Close() }

// send writes one frame to the host, and reports whether the framing rule
// let it: a caller whose frame answered a call answers it with an error
// instead, so that the host never waits for an answer that was not sent.
// A host that has gone misses it, as it misses the SDK's.
func (h *hostWire) send(frame []byte) bool {
	_, err := (hostWriter{h}).Write(frame)
	if err != nil && !errors.Is(err, errFraming) {
		h.p.log.Debug("frame to the host not written", zap.Error(err))
	}
	return !errors.Is(err, errFraming)
}

// pick is what the SDK reads of one frame from the host: nothing of a
// frame the frame path took.
func (h *hostWire) pick(frame []byte, deep bool) []byte {
	h.p.answers.noteAnswers(frame)
	switch {
	case deep:
	case !h.ready.Load():
		h.noteInitialized(frame)
	case bytes.Contains(frame, []byte(`"tools/call"`)) && h.callTool(frame):
		return nil
	case bytes.Contains(frame, []byte(`"notifications/cancelled"`)) && h.cancel(frame):
		return nil
	}
	return frame
}

// noteInitialized watches for the host's notifications/initialized. The
// frame path serves a host only after it, a step later than the SDK,
// which needs only initialize: a call before it goes the full path.
func (h *hostWire) noteInitialized(frame []byte) {
	if !bytes.Contains(frame, []byte(`"notifications/initialized"`)) {
		return
	}
	if e, ok := readEnvelope(frame); ok && e.id == nil && string(e.method) == `"notifications/initialized"` {
		h.ready.Store(true)
	}
}

// link is the host's link when the frame path may serve it: its
// upstreams run, it speaks a revision before 2026-07-28 (whose requests
// each carry what the host declared), it has not left, and no tracing
// wants a span per call. Nil sends the frame the full path.
func (h *hostWire) link() *link {
	if l := h.linked.Load(); l != nil {
		if l.gone.Err() != nil {
			return nil
		}
		return l
	}
	ss := h.session.Load()
	if ss == nil || h.p.cfg.Tracer != nil {
		return nil
	}
	h.p.mu.Lock()
	l := h.p.links[ss]
	h.p.mu.Unlock()
	if l == nil || !l.started.Load() || l.host.modern() || l.gone.Err() != nil {
		return nil
	}
	h.linked.Store(l)
	return l
}

// claim records c under the host's id; false when a call with that id is
// already in flight on the frame path, which the SDK then answers as it
// answers any repeated id.
func (h *hostWire) claim(c *frameCall) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := idKey(c.hostID)
	if h.calls[key] != nil {
		return false
	}
	h.calls[key] = c
	return true
}

// forget drops c from the calls in flight.
func (h *hostWire) forget(c *frameCall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if key := idKey(c.hostID); h.calls[key] == c {
		delete(h.calls, key)
	}
	if len(h.calls) == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
}

// drain waits until no call on the frame path is in flight, or d has
// passed, and reports whether they all ended. At shutdown the host's calls
// end as the SDK lets its own handlers end before it closes the host's
// stream: an upstream whose requests quiesce answered finishes its call,
// and the host gets its answer, before the upstream's session closes.
func (h *hostWire) drain(d time.Duration) bool {
	h.mu.Lock()
	if len(h.calls) == 0 {
		h.mu.Unlock()
		return true
	}
	if h.idle == nil {
		h.idle = make(chan struct{})
	}
	idle := h.idle
	h.mu.Unlock()
	return closedWithin(idle, d)
}

// inFlight is the call the host's id names, nil if none.
func (h *hostWire) inFlight(id []byte) *frameCall {
	key := idKey(id)
	if key == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[key]
}

// idKey is a host's id as the SDK reads it (jsonrpc.MakeID): a number as
// the integer it truncates to, a string with its escapes resolved; "" for
// an id it does not read. The calls in flight are kept by it, so that a
// cancellation names the call the SDK would take it to name however
// either id is spelt (7 and 7.0, -0 and 0, "a" and "\u0061").
func idKey(v []byte) string {
	switch {
	case rawjson.PlainString(v):
		return string(v)
	case rawjson.Integer(v) && len(v) <= 15 && string(v) != "-0":
		return string(v) // exact in the float64 the SDK reads it into
	}
	var x any
	if json.Unmarshal(v, &x) != nil {
		return ""
	}
	id, err := jsonrpc.MakeID(x)
	if err != nil {
		return ""
	}
	switch raw := id.Raw().(type) {
	case int64:
		return strconv.FormatInt(raw, 10)
	case string:
		return `"` + raw + `"`
	}
	return ""
}

// respondResult and respondError answer the host's call id, as the SDK
// would have.
func (h *hostWire) respondResult(id []byte, res mcp.Result) {
	raw, err := json.Marshal(res)
	if err != nil {
		h.respondError(id, refusal.Internal("result could not be encoded"))
		return
	}
	h.respond(id, raw, nil)
}

func (h *hostWire) respondError(id []byte, err error) { h.respond(id, nil, err) }

func (h *hostWire) respond(id []byte, result json.RawMessage, err error) {
	var v any
	_ = json.Unmarshal(id, &v) // a string or an integer (hostCallID)
	rid, idErr := jsonrpc.MakeID(v)
	if idErr != nil {
		return
	}
	b, encErr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: rid, Result: result, Error: err})
	if encErr != nil {
		h.p.log.Warn("answer to the host could not be encoded", zap.Error(encErr))
		return
	}
	h.send(append(b, '\n'))
}

// closedWithin waits until ch is closed, or until timeout, and reports
// whether it was.
func closedWithin(ch <-chan struct{}, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
