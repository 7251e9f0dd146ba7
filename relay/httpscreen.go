package relay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// screeningTransport is the guard of an HTTP upstream. The SDK's HTTP
// connection must stay unwrapped (its session hooks open the standalone GET
// stream and set MCP-Protocol-Version), so the guard sits one layer down,
// in the HTTP client: it reads every response body the upstream sends, JSON
// or event stream, from the POSTs and the GET streams alike, and screens
// each JSON-RPC message in it before the SDK decodes it. Refused pushes are
// answered by a POST of its own and hidden from the SDK; refused
// input_required results reach the SDK as their refusal. Everything else
// passes byte for byte.
//
// Every body the SDK or the HTTP client may read is bounded as it is read,
// by rawjson.MaxFrame, the bound on one message from any upstream: a JSON answer,
// an event of a stream, the body of an error status (the SDK reads it for
// the JSON-RPC error in it), of a redirect. One that outgrows it is read
// no further and its connection closed; the call it answers fails with the
// firewall's own error (refusal.AnswerTooLarge), logged with the size.
type screeningTransport struct {
	base   http.RoundTripper // adds the configured headers; answers go through it too
	server string            // the operator's name for the upstream
	log    *zap.Logger
	guard
}

func (t *screeningTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if id, ok := answerID(r); ok && t.held != nil {
		defer t.held.answered(id) // the push is answered once its answer is sent
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if body := t.filter(r, resp); body != nil {
		resp.Body = body
		resp.ContentLength = -1 // a refusal changes the length
		resp.Header.Del("Content-Length")
	}
	return resp, nil
}

// filter is what is read of resp, the answer to r, instead of its body;
// nil for a body nobody reads. The SDK decodes a JSON-RPC error from an
// error status's body, whatever its type, and messages from a success's
// JSON or event stream. The HTTP client reads at most 2 KiB of a redirect
// it follows, and the SDK the body of one it does not follow: bounded, not
// buffered.
func (t *screeningTransport) filter(r *http.Request, resp *http.Response) io.ReadCloser {
	switch {
	case resp.StatusCode >= 400:
		return newJSONFilter(resp, screenNothing, t.refusal(r))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return &boundedBody{body: resp.Body, left: rawjson.MaxFrame, refused: func(n int64) { t.logTooLarge(r, n, false) }}
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "text/event-stream":
		return newSSEFilter(resp.Body, t.bodyScreen(r), t.refusal(r))
	case "application/json":
		return newJSONFilter(resp, t.bodyScreen(r), t.refusal(r))
	}
	return nil // the SDK refuses any other content, unread
}

// screenNothing keeps every payload: an error status's body is the SDK's to
// read, for the JSON-RPC error in it.
func screenNothing(payload []byte) ([]byte, bool, error) { return payload, true, nil }

// mediaType is the media type of a Content-Type value, parsed as the SDK
// parses it, so the same bodies count as JSON or as an event stream.
func mediaType(value string) string {
	mt, _, err := mime.ParseMediaType(value)
	if err != nil {
		return ""
	}
	return mt
}

// rewrite decides what the SDK gets instead of one JSON payload: the same
// bytes (keep), other bytes, or nothing (out nil). An error breaks the body.
type rewrite func(payload []byte) (out []byte, keep bool, err error)

// bodyScreen screens the payloads of the response to opened: one message, or
// a batch element by element. The SDK decodes no batch, but the firewall
// must not depend on that.
func (t *screeningTransport) bodyScreen(opened *http.Request) rewrite {
	return func(payload []byte) ([]byte, bool, error) {
		if plainResponse(payload) {
			t.listed.note(rawjson.MemberValue(payload, "result"))
			return payload, true, nil
		}
		if trimmed := bytes.TrimLeft(payload, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
			return t.screenBatch(opened, payload)
		}
		return t.screenOne(opened, payload)
	}
}

// plainResponse reports, from payload's bytes alone, that the screen would
// pass it as it is: one JSON object with no member named method (in any
// case, though the SDK's decoder matches names exactly: so no request)
// whose every member named result is one mayNeedInput passes over.
// eachMember reads names as written; a name with an escape in it, invalid
// JSON or anything but an object is not read here, and the payload is
// screened. So a large answer is held once, in the screen's array, and not
// also decoded by the screen (the SDK's decoder copies what it reads).
func plainResponse(payload []byte) bool {
	return json.Valid(payload) && rawjson.EachMember(payload, func(name, value []byte) bool {
		switch {
		case strings.EqualFold(string(name), "method"):
			return false
		case strings.EqualFold(string(name), "result"):
			return !mayNeedInput(value)
		}
		return true
	})
}

// screenOne decodes payload with the SDK's own decoder, so it screens the
// very message the SDK would act on; what that decoder refuses, the SDK
// refuses too, and it passes.
func (t *screeningTransport) screenOne(opened *http.Request, payload []byte) ([]byte, bool, error) {
	msg, err := jsonrpc.DecodeMessage(payload)
	if err != nil {
		return payload, true, nil
	}
	j := t.screenMessage(opened.Context(), msg)
	switch {
	case j.reply != nil:
		return nil, false, t.reply(opened, j.reply)
	case j.replace != nil:
		out, err := jsonrpc.EncodeMessage(j.replace)
		return out, false, err
	}
	return payload, true, nil
}

// screenBatch screens each element of a JSON array as a message, keeping the
// bytes of those that pass; a batch with nothing changed passes whole.
func (t *screeningTransport) screenBatch(opened *http.Request, payload []byte) ([]byte, bool, error) {
	var elems []json.RawMessage
	if json.Unmarshal(payload, &elems) != nil {
		return payload, true, nil
	}
	kept := make([][]byte, 0, len(elems))
	changed := false
	for _, el := range elems {
		out, keep, err := t.screenOne(opened, el)
		if err != nil {
			return nil, false, err
		}
		changed = changed || !keep
		if out != nil {
			kept = append(kept, out)
		}
	}
	switch {
	case !changed:
		return payload, true, nil
	case len(kept) == 0:
		return nil, false, nil
	}
	return append(append([]byte{'['}, bytes.Join(kept, []byte{','})...), ']'), false, nil
}

// reply sends a refusal to the upstream the way the SDK sends any
// response: a POST to the endpoint, carrying the session and protocol
// version of the request whose response held the push.
func (t *screeningTransport) reply(opened *http.Request, resp *jsonrpc.Response) error {
	body, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(opened.Context(), http.MethodPost, opened.URL.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, k := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Authorization"} {
		if v := opened.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("answering a refused sampling request: %w", err)
	}
	_ = res.Body.Close() // unread, as the SDK leaves the body of its own answers
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("answering a refused sampling request: %s", res.Status)
	}
	return nil
}

// sseFilter passes an event stream through event by event, as it arrives,
// rewriting only the events whose payload is refused. A long-lived stream
// is never buffered beyond one event, of at most rawjson.MaxFrame bytes (the SDK's
// own bound on an event is set to the same). Its reading mirrors the SDK's
// (lines end at \n, with any \r before it dropped; a field is what
// precedes the first colon; data values are trimmed and joined by \n;
// only unnamed and "message" events are decoded), so it screens exactly
// what the SDK will decode. Passed events keep their bytes; a rewritten
// one keeps every line but its data lines (its id above all: the SDK
// resumes from the last id it saw). An event past the bound ends the
// stream unread from there: the SDK gets the refusal of the call the
// stream answers as its last event.
type sseFilter struct {
	src    *bufio.Reader
	body   io.Closer
	screen rewrite
	refuse func(seen int64, declared bool) ([]byte, error)
	out    bytes.Buffer // rewritten bytes not yet read
	err    error        // sticky, after out is drained
}

func newSSEFilter(body io.ReadCloser, screen rewrite, refuse func(int64, bool) ([]byte, error)) *sseFilter {
	return &sseFilter{src: bufio.NewReader(body), body: body, screen: screen, refuse: refuse}
}

func (f *sseFilter) Read(p []byte) (int, error) {
	for f.out.Len() == 0 && f.err == nil {
		f.err = f.next()
	}
	if f.out.Len() > 0 {
		return f.out.Read(p)
	}
	return 0, f.err
}

func (f *sseFilter) Close() error { return f.body.Close() }

// lineTooLarge is a line outgrowing what is left of rawjson.MaxFrame for its
// event, found by readLine once read bytes of it were read.
type lineTooLarge struct{ read int }

func (e *lineTooLarge) Error() string {
	return fmt.Sprintf("event stream: an event exceeds %d bytes", rawjson.MaxFrame)
}

// next reads one event (up to its blank line, or the end of the stream)
// and queues what the SDK gets of it.
func (f *sseFilter) next() error {
	var ev sseEvent
	for {
		line, err := readLine(f.src, rawjson.MaxFrame-ev.size)
		if big, ok := errors.AsType[*lineTooLarge](err); ok {
			return f.tooLarge(ev.size + big.read)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		ev.add(line)
		if err != nil || ev.ended {
			if werr := f.emit(&ev); werr != nil {
				return werr
			}
			return err
		}
	}
}

// tooLarge ends the stream at an event past rawjson.MaxFrame, of which seen bytes
// were read: the body is closed unread from there, and the SDK reads the
// refusal as one more event, then the end of the stream.
func (f *sseFilter) tooLarge(seen int) error {
	_ = f.body.Close()
	payload, err := f.refuse(int64(seen), false)
	if err != nil {
		return err
	}
	writeData(&f.out, payload, nil)
	f.out.WriteByte('\n')
	return io.EOF
}

// readLine reads one line, \n included, refusing one longer than budget.
func readLine(r *bufio.Reader, budget int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > budget {
			return nil, &lineTooLarge{read: len(line) + len(frag)}
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// emit queues ev: unchanged, unless its payload is refused.
func (f *sseFilter) emit(ev *sseEvent) error {
	payload := ev.payload()
	if payload == nil {
		ev.writeTo(&f.out, nil)
		return nil
	}
	out, keep, err := f.screen(payload)
	switch {
	case err != nil:
		return err
	case keep:
		ev.writeTo(&f.out, nil)
	default:
		ev.writeTo(&f.out, func(w *bytes.Buffer, ending []byte) { writeData(w, out, ending) })
	}
	return nil
}

// sseEvent is one event as read: its lines, line endings included.
type sseEvent struct {
	lines  []sseLine
	values [][]byte // data values, in order
	name   string   // the last event field
	size   int
	ended  bool // its blank line was read
}

type sseLine struct {
	raw  []byte
	data bool
}

// add records line as the SDK reads it.
func (e *sseEvent) add(line []byte) {
	if len(line) == 0 {
		return
	}
	e.size += len(line)
	field := bytes.TrimRight(line, "\r\n")
	if len(field) == 0 {
		e.lines, e.ended = append(e.lines, sseLine{raw: line}), true
		return
	}
	key, value, _ := bytes.Cut(field, []byte{':'})
	switch string(key) {
	case "data":
		e.values = append(e.values, bytes.TrimSpace(value))
	case "event":
		e.name = strings.TrimSpace(string(value))
	}
	e.lines = append(e.lines, sseLine{raw: line, data: string(key) == "data"})
}

// payload is the JSON the SDK decodes from the event, nil if none: an
// event without data, or named other than "message", it skips.
func (e *sseEvent) payload() []byte {
	if e.name != "" && e.name != "message" {
		return nil
	}
	var data []byte
	if len(e.values) == 1 {
		data = e.values[0] // one data line: its value, not a copy
	} else {
		data = bytes.Join(e.values, []byte{'\n'})
	}
	if len(data) == 0 {
		return nil
	}
	return data
}

// writeTo writes the event's lines; with data non-nil, the data lines are
// left out and data writes the new ones where the first stood.
func (e *sseEvent) writeTo(w *bytes.Buffer, data func(w *bytes.Buffer, ending []byte)) {
	first := true
	for _, l := range e.lines {
		switch {
		case !l.data || data == nil:
			w.Write(l.raw)
		case first:
			data(w, l.raw[len(bytes.TrimRight(l.raw, "\r\n")):])
			first = false
		}
	}
}

// writeData writes payload as data lines, one per line of it, ending each
// as the line it replaces ended. A nil payload writes none.
func writeData(w *bytes.Buffer, payload, ending []byte) {
	if payload == nil {
		return
	}
	if len(ending) == 0 {
		ending = []byte{'\n'}
	}
	for part := range bytes.SplitSeq(payload, []byte{'\n'}) {
		w.WriteString("data: ")
		w.Write(part)
		w.Write(ending)
	}
}

// answerID is the id of the JSON-RPC response a POST carries, read from
// its body through GetBody (the SDK sends each message from one byte
// slice, so the request keeps its own); false for anything else.
func answerID(r *http.Request) (jsonrpc.ID, bool) {
	raw, ok := sentBody(r)
	if !ok {
		return jsonrpc.ID{}, false
	}
	var id json.RawMessage
	for _, m := range rawjson.Members(raw) {
		switch m.Key {
		case "method":
			return jsonrpc.ID{}, false
		case "id":
			id = m.Value
		}
	}
	var v any
	if id == nil || json.Unmarshal(id, &v) != nil {
		return jsonrpc.ID{}, false
	}
	rid, err := jsonrpc.MakeID(v)
	return rid, err == nil
}

// sentCall is the call a POST carries, read as answerID reads; false for
// anything else.
func sentCall(r *http.Request) (*jsonrpc.Request, bool) {
	raw, ok := sentBody(r)
	if !ok {
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(raw)
	if req, ok := msg.(*jsonrpc.Request); err == nil && ok && req.IsCall() {
		return req, true
	}
	return nil, false
}

// sentBody is the body of a POST the SDK sent, from GetBody.
func sentBody(r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost || r.GetBody == nil {
		return nil, false
	}
	body, err := r.GetBody()
	if err != nil {
		return nil, false
	}
	defer body.Close()
	raw, err := io.ReadAll(body)
	return raw, err == nil
}
