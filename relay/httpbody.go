package relay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// The bodies of an HTTP upstream's answers, bounded as they are read
// (screeningTransport): no more than rawjson.MaxFrame bytes of one is ever read
// or held, and one is held once. The SDK reads a JSON answer whole, then
// decodes it; the screen, which must screen it before the SDK acts on it,
// reads it into one array (of the declared length, when there is one),
// and hands the SDK that array, letting it go once the SDK has all of it.

// refusal is what the SDK reads in place of an answer to opened that
// outgrew rawjson.MaxFrame (seen bytes so far, or declared in its Content-Length):
// the firewall's error for the call opened carries, once logged. A body
// that answers no call (the standalone stream) breaks with errTooLarge
// instead.
func (t *screeningTransport) refusal(opened *http.Request) func(seen int64, declared bool) ([]byte, error) {
	return func(seen int64, declared bool) ([]byte, error) {
		call, ok := t.logTooLarge(opened, seen, declared)
		if !ok {
			return nil, errTooLarge
		}
		return jsonrpc.EncodeMessage(&jsonrpc.Response{ID: call.ID, Error: refusal.AnswerTooLarge(t.server, rawjson.MaxFrame)})
	}
}

// logTooLarge warns of an answer to opened refused past rawjson.MaxFrame, with
// the size seen, and returns the call it answers, if any.
func (t *screeningTransport) logTooLarge(opened *http.Request, seen int64, declared bool) (*jsonrpc.Request, bool) {
	size := zap.Int64("bytes_read", seen)
	if declared {
		size = zap.Int64("content_length", seen)
	}
	call, ok := sentCall(opened)
	answering := "no call (the server's own stream)"
	if ok {
		answering = call.Method
	}
	t.log.Warn("upstream answer refused: larger than the limit", size, zap.Int("limit_bytes", rawjson.MaxFrame),
		zap.String("answering", answering))
	return call, ok
}

// errTooLarge breaks a body past rawjson.MaxFrame that answers no call.
var errTooLarge = fmt.Errorf("upstream message larger than %d bytes", rawjson.MaxFrame)

// jsonFilter is a JSON response body, read whole on the first Read, as
// the SDK reads it, and screened as one payload. A hidden push leaves it
// empty: a server that answers a call with a request has broken the
// protocol, and the SDK fails the connection.
//
// The body is read once, into one array of its declared length when it
// has one, and at most rawjson.MaxFrame bytes of it (readBody); past that, the
// rest is never read, and the SDK gets the refusal instead. The SDK then
// copies what the filter hands it into its own array, and decodes that:
// the filter lets go of its array as soon as the SDK has had all of it, so
// the two are held together only while the SDK's grows.
type jsonFilter struct {
	body   io.ReadCloser
	length int64 // declared, or -1
	screen rewrite
	refuse func(seen int64, declared bool) ([]byte, error)
	out    []byte // not yet read by the SDK; nil once it has all of it
	filled bool
	err    error
}

func newJSONFilter(resp *http.Response, screen rewrite, refuse func(int64, bool) ([]byte, error)) *jsonFilter {
	return &jsonFilter{body: resp.Body, length: resp.ContentLength, screen: screen, refuse: refuse}
}

func (f *jsonFilter) Read(p []byte) (int, error) {
	if !f.filled {
		f.filled = true
		f.out, f.err = f.fill()
	}
	if f.err != nil {
		f.out = nil
		return 0, f.err
	}
	if len(f.out) == 0 {
		f.out = nil
		return 0, io.EOF
	}
	n := copy(p, f.out)
	if f.out = f.out[n:]; len(f.out) == 0 {
		f.out = nil // the SDK has it all
	}
	return n, nil
}

// fill reads and screens the body; what it returns is what the SDK reads.
func (f *jsonFilter) fill() ([]byte, error) {
	in, err := readBody(f.body, f.length)
	var big *bodyTooLarge
	if errors.As(err, &big) {
		_ = f.body.Close() // unread past the bound: the connection closes
		return f.refuse(big.seen, big.declared)
	}
	if err != nil {
		return nil, err
	}
	out, keep, err := f.screen(in)
	if keep {
		out = in
	}
	return out, err
}

func (f *jsonFilter) Close() error {
	f.out = nil
	return f.body.Close()
}

// boundedBody is a body passed on as it is read, up to left bytes: one
// byte more, and it is closed, refused (once) and fails with errTooLarge.
type boundedBody struct {
	body    io.ReadCloser
	left    int64
	refused func(seen int64)
	seen    int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	p = p[:min(int64(len(p)), b.left+1)]
	n, err := b.body.Read(p)
	b.seen += int64(n)
	if b.left -= int64(n); b.left < 0 {
		_ = b.body.Close()
		b.refused(b.seen)
		return 0, errTooLarge
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

// bodyTooLarge is a body past rawjson.MaxFrame: seen bytes were read of it, or
// declared in its Content-Length (and none read).
type bodyTooLarge struct {
	seen     int64
	declared bool
}

func (e *bodyTooLarge) Error() string {
	return fmt.Sprintf("body larger than %d bytes (%d seen)", rawjson.MaxFrame, e.seen)
}

// readBody reads a whole body of at most rawjson.MaxFrame bytes into one array,
// refusing it one byte past rawjson.MaxFrame: of the declared length, when there
// is one, allocated at once; otherwise read in pieces of growing size,
// joined into one array of the exact size once the body has ended within
// the bound (so a body past it costs the bound, not twice the bound).
func readBody(r io.Reader, length int64) ([]byte, error) {
	switch {
	case length > rawjson.MaxFrame:
		return nil, &bodyTooLarge{seen: length, declared: true}
	case length >= 0:
		b := make([]byte, length)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var pieces [][]byte
	for read, size := 0, 512; ; size *= 2 {
		piece := make([]byte, min(size, rawjson.MaxFrame+1-read))
		n, err := io.ReadFull(r, piece)
		pieces, read = append(pieces, piece[:n]), read+n
		switch {
		case read > rawjson.MaxFrame:
			return nil, &bodyTooLarge{seen: int64(read)}
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return bytes.Join(pieces, nil), nil
		case err != nil:
			return nil, err
		}
	}
}
