package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodCreateMessage is the legacy sampling request an upstream pushes.
const methodCreateMessage = "sampling/createMessage"

// screen judges the raw params of a request of kind k (sampling,
// elicitation); a non-nil error is the answer the upstream gets instead of
// any further processing.
type screen func(ctx context.Context, k *kind, params json.RawMessage) *jsonrpc.Error

// screenedKind is the kind of a push the guard screens on its raw bytes,
// nil for any other method. A roots/list push carries nothing to screen.
func screenedKind(method string) *kind {
	switch method {
	case methodCreateMessage:
		return samplingKind
	case methodElicit:
		return elicitationKind
	}
	return nil
}

// guard is the raw screening of what an upstream sends, shared by both
// ways of reaching one: guardedConn applies it to the messages of a
// command upstream, screeningTransport to the response bodies of an HTTP
// upstream. Both decode with the SDK's own decoder, so the guard judges
// exactly the message the SDK would act on.
type guard struct {
	screen screen // pushes
	inputs screen // sampling and elicitation entries of input_required results
	// admit and admitInputs come before either screen (see pushhold.go);
	// held keeps the hold of each push let through until it is answered.
	admit       admitter
	admitInputs func(n int, bytes int64) *jsonrpc.Error
	held        *pushHolds
}

// judgement is what becomes of one message from an upstream. With neither
// field set it passes unchanged. A replaced result is a refusal, or a
// result the SDK could not otherwise read (withRootsParams).
type judgement struct {
	answer  *jsonrpc.Response // a refused push: the upstream gets this, the SDK nothing
	replace *jsonrpc.Response // a refused input_required result: the SDK gets this instead
}

// judge screens msg on the bytes the upstream sent: a sampling or
// elicitation push, or the sampling and elicitation entries of an
// input_required result. Anything else passes.
// A push is admitted first (refused at once past a limit); the hold of one
// that passes is kept in g.held until its answer is written.
func (g guard) judge(ctx context.Context, msg jsonrpc.Message) judgement {
	switch msg := msg.(type) {
	case *jsonrpc.Response:
		if werr := g.refusedInputs(ctx, msg); werr != nil {
			return judgement{replace: &jsonrpc.Response{ID: msg.ID, Error: werr}}
		}
		if fixed := withRootsParams(msg.Result); fixed != nil && msg.Error == nil {
			return judgement{replace: &jsonrpc.Response{ID: msg.ID, Result: fixed}}
		}
	case *jsonrpc.Request:
		k := screenedKind(msg.Method)
		if g.screen == nil || k == nil || !msg.IsCall() {
			break
		}
		h := g.held.claim(msg.ID) // admitted on its frame (frameScreen.admitFrame)
		var werr *jsonrpc.Error
		if h == nil {
			h, werr = g.admitPush(msg)
		}
		if werr == nil {
			werr = g.screen(ctx, k, msg.Params)
		}
		if werr != nil {
			h.release()
			return judgement{answer: &jsonrpc.Response{ID: msg.ID, Error: werr}}
		}
		g.held.add(msg.ID, h)
	}
	return judgement{}
}

// guardedTransport wraps an upstream transport so that every sampling and
// elicitation request the upstream sends is validated on the bytes it sent, before the
// SDK decodes them. Decoding is lossy (duplicate keys collapse, unknown
// fields vanish, some shapes are refused with the SDK's own messages), so
// strictness must come first; the typed handler then validates the
// canonical form it forwards. A command's stdout is also read frame by
// frame before the SDK's decoder (frameScreen), so that a frame nested
// too deep for that decoder is judged too, instead of ending the session.
// It is for command upstreams only: wrapping the SDK's HTTP connection
// would hide its session hooks (see screeningTransport).
type guardedTransport struct {
	mcp.Transport
	guard
}

func (t *guardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if ct, ok := t.Transport.(*mcp.CommandTransport); ok {
		return t.connectCommand(ctx, ct)
	}
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardedConn{Connection: c, guard: t.guard}, nil
}

// connectCommand starts the command as mcp.CommandTransport does, but
// reads its stdout through a frameScreen: a frame the SDK's decoder cannot
// read (nested deeper than it allows) would otherwise end the whole
// session with the SDK's own error, and the push in it would never be
// answered. The connection is the SDK's own stdio connection over the
// screened stream.
func (t *guardedTransport) connectCommand(ctx context.Context, ct *mcp.CommandTransport) (mcp.Connection, error) {
	stdout, err := ct.Command.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := ct.Command.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := ct.Command.Start(); err != nil {
		return nil, err
	}
	w := &childStdin{cmd: ct.Command, stdin: stdin, terminate: ct.TerminateDuration}
	if w.terminate <= 0 {
		w.terminate = 5 * time.Second // the SDK's default
	}
	r := &frameScreen{src: stdout, guard: t.guard, ctx: context.WithoutCancel(ctx), reply: w.Write}
	c, err := (&mcp.IOTransport{Reader: r, Writer: w}).Connect(ctx)
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	return &guardedConn{Connection: c, guard: t.guard}, nil
}

// childStdin is the command's stdin as the connection's writer: writes
// are serialized, since frameScreen answers refused frames on it too, and
// Close ends the command the way the SDK's command transport does (close
// stdin, wait, SIGTERM, wait, SIGKILL).
type childStdin struct {
	mu        sync.Mutex
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	terminate time.Duration
}

func (w *childStdin) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stdin.Write(p)
}

func (w *childStdin) Close() error {
	if err := w.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- w.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(w.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if w.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := w.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess")
}

// sdkMaxDepth is the nesting the SDK's decoder accepts in one frame; a
// deeper frame fails to decode and ends the session.
const sdkMaxDepth = 1000

// maxFrame is the most bytes frameScreen holds of one frame, the SDK's own
// default cap (mcp.DefaultMaxLineLength). A longer frame passes unread,
// and the SDK refuses it.
const maxFrame = mcp.DefaultMaxLineLength

// frameScreen reads an upstream's stdout frame by frame for the SDK.
// Frames pass byte for byte, except one nested deeper than the SDK
// decodes: it is judged as guardedConn judges messages (read without the
// SDK's decoder), and a refused push is answered on stdin and dropped, a
// refused input_required result replaced by its refusal. A deep frame the
// guard does not refuse passes, and the SDK ends the session on it as
// before.
type frameScreen struct {
	src   io.Reader
	guard guard
	ctx   context.Context
	reply func([]byte) (int, error) // writes to the upstream

	buf     []byte // read from src, not yet a whole frame
	store   []byte // the array buf was read into, reused once out is drained
	out     []byte // ready for the SDK
	scanned int    // bytes of buf already scanned
	depth   int    // nesting at buf[scanned]
	deepest int    // deepest nesting of the frame so far
	inStr   bool   // buf[scanned] is inside a string
	escaped bool   // and follows a backslash
	through bool   // stopped screening: the rest passes unread
	err     error  // from src, returned once out and buf are drained
}

func (f *frameScreen) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.through && len(f.buf) == 0 {
			return f.src.Read(p)
		}
		if err := f.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// next moves what can be handed on from buf to out, reading src when buf
// holds no complete frame.
func (f *frameScreen) next() error {
	if f.through {
		f.out, f.buf = f.buf, nil
		return nil
	}
	// Whitespace between frames passes as it is.
	if i := skipSpace(f.buf, 0); i > 0 && f.scanned == 0 {
		f.out, f.buf = f.buf[:i:i], f.buf[i:]
		return nil
	}
	if len(f.buf) > 0 && f.scanned == 0 && f.buf[0] != '{' && f.buf[0] != '[' {
		f.through = true // not a frame the SDK can read either
		return nil
	}
	if end := f.scan(); end > 0 {
		frame := f.buf[:end:end]
		f.buf = f.buf[end:]
		deep := f.deepest > sdkMaxDepth
		f.scanned, f.deepest = 0, 0
		if deep {
			f.store = nil // judgeDeep's screen reads the frame in place: never reuse it
			f.out = f.judgeDeep(frame)
		} else {
			f.out = f.admitFrame(frame)
		}
		return nil
	}
	if len(f.buf) > maxFrame {
		f.through = true
		return nil
	}
	if f.err != nil {
		if len(f.buf) > 0 {
			f.through = true
			return nil
		}
		return f.err
	}
	f.refill()
	return nil
}

// frameReuse is the largest read buffer frameScreen keeps for the next
// frames; a larger one, made for a large frame, is let go after it.
const frameReuse = 1 << 20

// refill reads more of src into buf. The array frames were read into is
// reused once every frame in it has been handed on (next runs only when
// out is drained): a stream of frames then costs no garbage, where a new
// array per frame would cost several times its size, which under a flood
// of large requests would be most of what serve allocates.
func (f *frameScreen) refill() {
	if f.store != nil && len(f.buf) <= cap(f.store) {
		f.buf = f.store[:copy(f.store, f.buf)]
	}
	f.buf = slices.Grow(f.buf, 64<<10)
	f.store = nil
	if cap(f.buf) <= frameReuse {
		f.store = f.buf[:cap(f.buf)]
	}
	n, err := f.src.Read(f.buf[len(f.buf):cap(f.buf)])
	f.buf, f.err = f.buf[:len(f.buf)+n], err
}

// admitFrame admits a push on its frame, before the SDK's decoder reads
// it: a refused push is answered here and dropped, and costs no more than
// the one decode of its envelope that tells what it is (with the SDK's own
// decoder, so both read the same message). The hold of an admitted one
// waits in pushHolds for the guard's judge to claim. Only frames that can
// hold the method's name are decoded: it can only be written with these
// letters or with \u escapes.
func (f *frameScreen) admitFrame(frame []byte) []byte {
	if f.guard.admit == nil || f.guard.held == nil || (!bytes.Contains(frame, []byte("createMessage")) &&
		!bytes.Contains(frame, []byte("elicitation")) && !bytes.Contains(frame, []byte(`\u`))) {
		return frame
	}
	msg, err := jsonrpc.DecodeMessage(frame)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || screenedKind(req.Method) == nil || !req.IsCall() {
		return frame
	}
	h, werr := f.guard.admitPush(req)
	if werr != nil {
		f.send(&jsonrpc.Response{ID: req.ID, Error: werr})
		return nil
	}
	f.guard.held.frame(req.ID, h)
	return frame
}

// send writes msg to the upstream.
func (f *frameScreen) send(msg jsonrpc.Message) {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return
	}
	_, _ = f.reply(append(b, '\n'))
}

// Close does nothing: the command's stdout closes when the command exits,
// which closing its stdin asks for (see childStdin).
func (f *frameScreen) Close() error { return nil }

// scan goes on through buf and returns the end of the frame that starts
// at buf[0], or 0 while it is incomplete.
func (f *frameScreen) scan() int {
	for ; f.scanned < len(f.buf); f.scanned++ {
		b := f.buf[f.scanned]
		switch {
		case f.escaped:
			f.escaped = false
		case f.inStr:
			f.escaped = b == '\\'
			f.inStr = b != '"'
		case b == '"':
			f.inStr = true
		case b == '{' || b == '[':
			f.depth++
			f.deepest = max(f.deepest, f.depth)
		case b == '}' || b == ']':
			if f.depth--; f.depth == 0 {
				f.scanned++
				return f.scanned
			}
		}
	}
	return 0
}

// judgeDeep judges a frame too deep for the SDK's decoder, reading only
// its envelope. It returns what the SDK gets instead: nothing for a push
// answered here, a refusal for a result, else the frame.
func (f *frameScreen) judgeDeep(frame []byte) []byte {
	var msg jsonrpc.Message
	var id any
	env := map[string]json.RawMessage{}
	for _, m := range members(frame) {
		env[m.key] = m.value
	}
	if json.Unmarshal(env["id"], &id) != nil {
		return frame
	}
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		return frame
	}
	var method string
	if _, ok := env["method"]; ok {
		if json.Unmarshal(env["method"], &method) != nil {
			return frame
		}
		msg = &jsonrpc.Request{ID: rid, Method: method, Params: env["params"]}
	} else {
		msg = &jsonrpc.Response{ID: rid, Result: env["result"]}
	}
	j := f.guard.judge(f.ctx, msg)
	var send jsonrpc.Message
	switch {
	case j.answer != nil:
		send = j.answer
	case j.replace != nil:
		send = j.replace
	default:
		return frame
	}
	b, err := jsonrpc.EncodeMessage(send)
	if err != nil {
		return frame
	}
	b = append(b, '\n')
	if j.replace != nil {
		return b
	}
	_, _ = f.reply(b)
	return nil
}

// guardedConn answers refused sampling and elicitation requests itself and
// hides them from the SDK; every other message passes unchanged.
type guardedConn struct {
	mcp.Connection
	guard
}

func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		j := c.judge(ctx, msg)
		switch {
		case j.replace != nil:
			return j.replace, nil
		case j.answer == nil:
			return msg, nil
		}
		if err := c.Connection.Write(ctx, j.answer); err != nil {
			return nil, err
		}
	}
}

// Write sends msg; once an answer to a push is written, the push is no
// longer in flight.
func (c *guardedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if r, ok := msg.(*jsonrpc.Response); ok && c.held != nil {
		c.held.answered(r.ID)
	}
	return err
}

// Close ends the connection, and with it every push still in flight.
func (c *guardedConn) Close() error {
	err := c.Connection.Close()
	if c.held != nil {
		c.held.end()
	}
	return err
}

// refusedInputs checks, on the bytes the upstream sent, every sampling and
// elicitation entry of an input_required result (2026-07-28), as pushes
// are checked,
// and returns the first refusal. A result with a refused entry becomes that
// refusal: the call fails with it and the upstream is not retried.
// Capability gates wait for the typed check, which knows the host of the
// call.
func (g guard) refusedInputs(ctx context.Context, resp *jsonrpc.Response) *jsonrpc.Error {
	if g.inputs == nil || resp.Error != nil || !mayNeedInput(resp.Result) {
		return nil
	}
	if !exactEntryNames(resp.Result) {
		return errInputMemberNames()
	}
	entries := screenedInputs(resp.Result)
	if werr := g.admitInputRequests(entries); werr != nil {
		return werr
	}
	for _, e := range entries {
		if werr := g.inputs(ctx, e.k, e.params); werr != nil {
			return werr
		}
	}
	return nil
}

// screenedInput is the raw params of one entry of an input_required
// result, and its kind.
type screenedInput struct {
	k      *kind
	params json.RawMessage
}

// screenedInputs returns the params of every sampling and elicitation
// entry under inputRequests in a result, whatever its resultType says,
// sorted by entry key. The result's member names are matched exactly, as
// the SDK's decoder matches them: a lenient reader (encoding/json folds
// case) could be told "ResultType":"complete" beside
// "resultType":"input_required" and skip entries the SDK then acts on.
// Within an entry the SDK does fold case (encoding/json), which the
// exact names here match only once exactEntryNames has refused every
// other spelling. A repeated name counts every time (the SDK keeps the
// last inputRequests, method or params), so no spelling of an entry goes
// unscreened.
func screenedInputs(result []byte) []screenedInput {
	type entry struct {
		key    string
		kinds  []*kind
		params []json.RawMessage
	}
	var entries []entry
	for _, m := range members(result) {
		if m.key != "inputRequests" {
			continue
		}
		for _, in := range members(m.value) {
			e := entry{key: in.key}
			for _, f := range members(in.value) {
				var method string
				switch f.key {
				case "method":
					// The SDK keeps the last of repeated methods: params
					// are screened as every kind named.
					if json.Unmarshal(f.value, &method) != nil {
						continue
					}
					if k := screenedKind(method); k != nil && !slices.Contains(e.kinds, k) {
						e.kinds = append(e.kinds, k)
					}
				case "params":
					e.params = append(e.params, f.value)
				}
			}
			if len(e.kinds) > 0 {
				entries = append(entries, e)
			}
		}
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	var out []screenedInput
	for _, e := range entries {
		for _, k := range e.kinds {
			for _, params := range e.params {
				out = append(out, screenedInput{k: k, params: params})
			}
		}
	}
	return out
}

// exactEntryNames reports whether every entry under inputRequests in a
// result names its method and params exactly so, as the raw screen reads
// them. The SDK decodes each entry with encoding/json, which takes a
// member for method or params whatever its case ("METHOD", "Params", or
// with a letter that folds to theirs, as "paramſ"; strings.EqualFold is
// that folding), the last one winning. Refusing any such spelling, rather
// than reading entries the way that decoder does, makes the guarantee
// independent of which of several matching members a decoder keeps: every
// member the SDK could take as method or params is one the screen read.
// No conforming upstream spells them otherwise.
func exactEntryNames(result []byte) bool {
	for _, m := range members(result) {
		if m.key != "inputRequests" {
			continue
		}
		for _, in := range members(m.value) {
			for _, f := range members(in.value) {
				if miscased(f.key, "method") || miscased(f.key, "params") {
					return false
				}
			}
		}
	}
	return true
}

// miscased reports whether name is want spelt otherwise than exactly.
func miscased(name, want string) bool {
	return name != want && strings.EqualFold(name, want)
}

// mayNeedInput is a fast pre-check on a result's bytes: only one that says
// input_required or inputRequests, literally or behind a JSON escape (which
// every decoder resolves, so "input\u005frequired" must not slip past), is
// decoded.
func mayNeedInput(result []byte) bool {
	return bytes.Contains(result, []byte("input_required")) || bytes.Contains(result, []byte("inputRequests")) ||
		bytes.Contains(result, []byte(`\u`))
}

// member is one name and raw value of a JSON object.
type member struct {
	key   string
	value json.RawMessage
}

// members lists the members of the JSON object in raw, in order, repeats
// included, without decoding the values: it reads any depth without
// recursion. Anything that is not an object, or a malformed one, yields
// what was read before the fault.
func members(raw []byte) []member {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	var out []member
	for i++; ; {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return out
		}
		end := valueEnd(raw, i)
		var key string
		if end < 0 || json.Unmarshal(raw[i:end], &key) != nil {
			return out
		}
		if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return out
		}
		i = skipSpace(raw, i+1)
		if end = valueEnd(raw, i); end < 0 {
			return out
		}
		out = append(out, member{key: key, value: raw[i:end]})
		if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ',' {
			return out
		}
		i++
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just after the JSON value starting at i, or
// -1 when raw ends first, counting brackets outside strings (so any depth
// costs nothing but the scan). It trusts the value to be JSON: a decoder
// still reads each value it returns.
func valueEnd(raw []byte, i int) int {
	depth := 0
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			if i >= len(raw) {
				return -1
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			depth--
		case ' ', '\t', '\n', '\r', ',', ':':
			if depth > 0 {
				continue
			}
			return i // after a number or literal at the top
		default:
			if depth > 0 {
				continue
			}
			for i+1 < len(raw) && !strings.ContainsRune(" \t\n\r,:]}", rune(raw[i+1])) {
				i++
			}
		}
		if depth == 0 {
			return i + 1
		}
	}
	return -1
}
