package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// screen screens the raw params of a request of kind k (sampling,
// elicitation); a non-nil error is the answer the upstream gets instead of
// any further processing.
type screen func(ctx context.Context, k *pipeline.Kind, params json.RawMessage) *jsonrpc.Error

// screened reports whether the guard screens the raw params of a request of
// kind k: only a kind decided at the request stage carries anything to
// screen (a roots/list request carries nothing). Every kind is admitted
// all the same.
func screened(k *pipeline.Kind) bool { return k.Decides() }

// guard is the raw screening of what an upstream sends, shared by both
// ways of reaching one: guardedConn applies it to the messages of a
// command upstream, screeningTransport to the response bodies of an HTTP
// upstream. Both decode with the SDK's own decoder, so the guard screens
// exactly the message the SDK would act on.
type guard struct {
	screen screen // pushes
	inputs screen // sampling and elicitation entries of input_required results
	// admit and admitInputs come before either screen, for a request of
	// every kind relayed to a host, screened or not (see pushhold.go);
	// held keeps the hold of each push let through until it is answered.
	admit       admitter
	admitInputs func(n int, bytes int64) *jsonrpc.Error
	held        *pushHolds
	// sent keeps the params of the entries that pass, as written.
	sent *recentJSON
	// listed keeps the tools the upstream lists, as written.
	listed *listedTools
}

// screenResult is what becomes of one message from an upstream. With neither
// field set it passes unchanged. A replaced result is a refusal, or a
// result the SDK could not otherwise read (withRootsParams).
type screenResult struct {
	reply   *jsonrpc.Response // a refused push: the upstream gets this, the SDK nothing
	replace *jsonrpc.Response // a refused input_required result: the SDK gets this instead
}

// screenMessage screens msg on the bytes the upstream sent: a push of any kind
// relayed to a host, or the entries of an input_required result. Anything
// else passes. A push or a result's entries are admitted first (refused
// at once past a limit); the hold of a push that passes is kept in g.held
// until its answer is written.
func (g guard) screenMessage(ctx context.Context, msg jsonrpc.Message) screenResult {
	switch msg := msg.(type) {
	case *jsonrpc.Response:
		if werr := g.refusedInputs(ctx, msg); werr != nil {
			return screenResult{replace: &jsonrpc.Response{ID: msg.ID, Error: werr}}
		}
		g.listed.note(msg.Result)
		if fixed := withRootsParams(msg.Result); fixed != nil && msg.Error == nil {
			return screenResult{replace: &jsonrpc.Response{ID: msg.ID, Result: fixed}}
		}
	case *jsonrpc.Request:
		if k := pipeline.Relayed(msg.Method); k != nil && msg.IsCall() {
			if werr := g.pushed(ctx, k, msg); werr != nil {
				return screenResult{reply: &jsonrpc.Response{ID: msg.ID, Error: werr}}
			}
		}
	}
	return screenResult{}
}

// pushed admits a push of kind k, or takes the hold it was admitted with
// on its frame (frameScreen.admitFrame), then screens its params when k
// has any to screen. The hold of a push let through is kept until its
// answer is written; that of a refused one is given back.
func (g guard) pushed(ctx context.Context, k *pipeline.Kind, msg *jsonrpc.Request) *jsonrpc.Error {
	h := g.held.claim(msg.ID)
	var werr *jsonrpc.Error
	if h == nil {
		h, werr = g.admitPush(msg)
	}
	if werr == nil && g.screen != nil && screened(k) {
		werr = g.screen(ctx, k, msg.Params)
	}
	if werr != nil {
		h.Release()
		return werr
	}
	g.held.add(msg.ID, h, msg.Params)
	return nil
}

// guardedTransport wraps an upstream transport so that every sampling and
// elicitation request the upstream sends is validated on the bytes it sent, before the
// SDK decodes them. Decoding is lossy (duplicate keys collapse, unknown
// fields vanish, some shapes are refused with the SDK's own messages), so
// strictness must come first; the typed handler then validates the
// canonical form it forwards. A command's stdout is also read frame by
// frame before the SDK's decoder (frameScreen), so that a frame nested
// too deep for that decoder is screened too, instead of ending the session.
// It is for command upstreams only: wrapping the SDK's HTTP connection
// would hide its session hooks (see screeningTransport).
type guardedTransport struct {
	mcp.Transport
	guard
	framePath *frameCalls // the host calls relayed on the frame path (framepath.go)
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
	w, err := startChild(ct)
	if err != nil {
		return nil, err
	}
	t.framePath.attach(w)
	r := newFrameScreen(context.WithoutCancel(ctx), stdout, t.guard, t.framePath, w.Write)
	c, err := (&mcp.IOTransport{Reader: r, Writer: w}).Connect(ctx)
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	return &guardedConn{Connection: c, guard: t.guard}, nil
}

// frameScreen reads an upstream's stdout frame by frame for the SDK
// (rawjson.Splitter). Frames pass byte for byte, except: the answers and
// progress of the host calls relayed on the frame path, which go to their
// host from here (frameCalls); a push the admission refuses, answered on
// stdin and dropped (admitFrame); and a frame nested deeper than the SDK
// decodes, screened as guardedConn screens messages (read without the SDK's
// decoder), a refused push answered on stdin and dropped, a refused
// input_required result replaced by its refusal. A deep frame the guard
// does not refuse passes, and the SDK ends the session on it as before.
type frameScreen struct {
	*rawjson.Splitter
	guard     guard
	framePath *frameCalls // nil: no host call takes the frame path on this upstream
	ctx       context.Context
	reply     func([]byte) (int, error) // writes to the upstream
}

func newFrameScreen(ctx context.Context, src io.Reader, g guard, calls *frameCalls, reply func([]byte) (int, error)) *frameScreen {
	f := &frameScreen{guard: g, framePath: calls, ctx: ctx, reply: reply}
	f.Splitter = rawjson.NewSplitter(src, f.pick)
	return f
}

// pick is what the SDK reads of one frame.
func (f *frameScreen) pick(frame []byte, deep bool) []byte {
	switch {
	case deep:
		return f.screenDeep(frame)
	case f.framePath.took(frame):
		return nil
	}
	return f.admitFrame(frame)
}

// admitFrame admits a push of any kind relayed to a host on its frame,
// before the SDK's decoder reads it: a refused push is answered here and
// dropped, and costs no more than the one decode of its envelope that
// tells what it is (with the SDK's own decoder, so both read the same
// message). The hold of an admitted one waits in pushHolds for the
// guard's screen to claim. Only frames that may name a relayed method are
// decoded (mayNameRelayed).
func (f *frameScreen) admitFrame(frame []byte) []byte {
	if f.guard.admit == nil || f.guard.held == nil || !mayNameRelayed(frame) {
		return frame
	}
	msg, err := jsonrpc.DecodeMessage(frame)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || pipeline.Relayed(req.Method) == nil || !req.IsCall() {
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

// mayNameRelayed is a fast pre-check on a frame's bytes: whether it may
// hold the method of a kind relayed to a host (kinds). A JSON string can
// spell a method otherwise only with escapes: \/ for its slashes, which
// leaves each part between them as it is, or \u escapes, which any frame
// holding one is decoded for.
func mayNameRelayed(frame []byte) bool {
	if bytes.Contains(frame, []byte(`\u`)) {
		return true
	}
	for _, k := range pipeline.Kinds {
		if containsParts(frame, k.Method) {
			return true
		}
	}
	return false
}

// containsParts reports whether frame holds every '/'-separated part of
// method.
func containsParts(frame []byte, method string) bool {
	for part := range strings.SplitSeq(method, "/") {
		if !bytes.Contains(frame, []byte(part)) {
			return false
		}
	}
	return true
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

// screenDeep screens a frame too deep for the SDK's decoder, reading only
// its envelope. It returns what the SDK gets instead: nothing for a push
// answered here, a refusal for a result, else the frame. The refusal of
// an answer to a call on the frame path goes to its host from here: the
// SDK made no call with that id, and would drop it.
func (f *frameScreen) screenDeep(frame []byte) []byte {
	var msg jsonrpc.Message
	var id any
	env := map[string]json.RawMessage{}
	for _, m := range rawjson.Members(frame) {
		env[m.Key] = m.Value
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
	j := f.guard.screenMessage(f.ctx, msg)
	var send jsonrpc.Message
	switch {
	case j.reply != nil:
		send = j.reply
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
	switch {
	case j.replace != nil && f.framePath.took(b):
		return nil // the refusal answers a host call on the frame path
	case j.replace != nil:
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
		j := c.screenMessage(ctx, msg)
		switch {
		case j.replace != nil:
			return j.replace, nil
		case j.reply == nil:
			return msg, nil
		}
		if err := c.Connection.Write(ctx, j.reply); err != nil {
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

// refusedInputs checks, on the bytes the upstream sent, the entries of an
// input_required result (2026-07-28), as pushes are checked: all of them
// against the limits, then the params of every sampling and elicitation
// entry; it returns the first refusal. A result with a refused entry
// becomes that refusal: the call fails with it and the upstream is not
// retried. Capability gates wait for the typed check, which knows the
// host of the call.
func (g guard) refusedInputs(ctx context.Context, resp *jsonrpc.Response) *jsonrpc.Error {
	if g.inputs == nil || resp.Error != nil || !mayNeedInput(resp.Result) {
		return nil
	}
	if !exactEntryNames(resp.Result) {
		return refusal.InputMemberNames()
	}
	entries := inputEntries(resp.Result)
	if werr := g.admitInputRequests(entries); werr != nil {
		return werr
	}
	for _, e := range entries {
		if !screened(e.k) || e.params == nil {
			continue
		}
		if werr := g.inputs(ctx, e.k, e.params); werr != nil {
			return werr
		}
	}
	for _, e := range entries {
		g.sent.keep(e.params)
	}
	return nil
}

// inputEntry is the raw params of one entry of an input_required result,
// and its kind; params are nil for an entry without any.
type inputEntry struct {
	k      *pipeline.Kind
	params json.RawMessage
}

// inputEntries returns the params of every entry of a kind relayed to a
// host under inputRequests in a result, whatever its resultType says,
// sorted by entry key; an entry without params counts once, with none.
// The result's member names are matched exactly, as the SDK's decoder
// matches them: a lenient reader (encoding/json folds case) could be told
// "ResultType":"complete" beside "resultType":"input_required" and skip
// entries the SDK then acts on. Within an entry the SDK does fold case
// (encoding/json), which the exact names here match only once
// exactEntryNames has refused every other spelling. A repeated name
// counts every time (the SDK keeps the last inputRequests, method or
// params), so no spelling of an entry goes uncounted or unscreened.
func inputEntries(result []byte) []inputEntry {
	var entries []rawEntry
	for _, m := range rawjson.Members(result) {
		if m.Key != "inputRequests" {
			continue
		}
		for _, in := range rawjson.Members(m.Value) {
			if e := readEntry(in.Key, in.Value); len(e.kinds) > 0 {
				entries = append(entries, e)
			}
		}
	}
	slices.SortStableFunc(entries, func(a, b rawEntry) int { return strings.Compare(a.key, b.key) })
	var out []inputEntry
	for _, e := range entries {
		out = append(out, e.inputs()...)
	}
	return out
}

// rawEntry is one entry under inputRequests as written: every kind its
// methods name and every params it holds.
type rawEntry struct {
	key    string
	kinds  []*pipeline.Kind
	params []json.RawMessage
}

// readEntry reads the entry key holds, value.
func readEntry(key string, value json.RawMessage) rawEntry {
	e := rawEntry{key: key}
	for _, f := range rawjson.Members(value) {
		var method string
		switch f.Key {
		case "method":
			// The SDK keeps the last of repeated methods: params are
			// screened as every kind named.
			if json.Unmarshal(f.Value, &method) != nil {
				continue
			}
			if k := pipeline.Relayed(method); k != nil && !slices.Contains(e.kinds, k) {
				e.kinds = append(e.kinds, k)
			}
		case "params":
			e.params = append(e.params, f.Value)
		}
	}
	return e
}

// inputs is the entry as the guard counts it: each params as each kind,
// or once without params.
func (e rawEntry) inputs() []inputEntry {
	params := e.params
	if len(params) == 0 {
		params = []json.RawMessage{nil}
	}
	var out []inputEntry
	for _, k := range e.kinds {
		for _, p := range params {
			out = append(out, inputEntry{k: k, params: p})
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
	for _, m := range rawjson.Members(result) {
		if m.Key != "inputRequests" {
			continue
		}
		for _, in := range rawjson.Members(m.Value) {
			for _, f := range rawjson.Members(in.Value) {
				if miscased(f.Key, "method") || miscased(f.Key, "params") {
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
