package relay

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// oneLineEvents holds every event stream served to a host over streamable
// HTTP to the framing rule's form for server-sent events: each event is
// written whole, in one write (as the SDK writes each), and its data is
// one line of compact JSON. A reader of events ends a line at '\n' or
// '\r', so a raw one in the data would end the data line and make
// whatever followed it fields of the event, or events of their own. A
// data value that holds one is compacted (in valid JSON it can only be
// whitespace between tokens); an event that cannot be made so is not
// written, and the write's error ends its stream. It is the one writer of
// every event toward a host, whatever path made it.
func oneLineEvents(next http.Handler, log *zap.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&eventWriter{ResponseWriter: w, log: log}, r)
	})
}

// eventWriter is a host's response under oneLineEvents. Responses other
// than event streams pass as written: a JSON body has no lines to frame.
type eventWriter struct {
	http.ResponseWriter
	log *zap.Logger
}

func (w *eventWriter) Write(b []byte) (int, error) {
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		return w.ResponseWriter.Write(b)
	}
	ev, err := oneEvent(b)
	if err != nil {
		w.log.Error("an event to the host broke the framing rule and was not written", zap.Int("bytes", len(b)))
		return 0, err
	}
	if _, err := w.ResponseWriter.Write(ev); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (w *eventWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// oneEvent is the event b as it may be written: b itself, not copied, when
// its lines before the data line hold no '\r' and its data holds no line
// end; else b with its data compacted, when the data is one JSON value;
// else errFraming. b is one whole event: fields, one per line, the first
// data field last (if it has one), and the blank line that ends it.
func oneEvent(b []byte) ([]byte, error) {
	body, ok := bytes.CutSuffix(b, []byte("\n\n"))
	if !ok {
		return nil, errFraming
	}
	at := dataField(body)
	head := body
	if at >= 0 {
		head = body[:at]
	}
	switch {
	case bytes.IndexByte(head, '\r') >= 0:
		return nil, errFraming
	case at < 0:
		return b, nil // no data to frame: a priming or closing event
	}
	data := body[at+len("data:"):]
	data = bytes.TrimPrefix(data, []byte{' '})
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		return b, nil
	}
	out := bytes.NewBuffer(make([]byte, 0, len(b)))
	out.Write(body[:at])
	out.WriteString("data: ")
	if json.Compact(out, data) != nil {
		return nil, errFraming
	}
	out.WriteString("\n\n")
	return out.Bytes(), nil
}

// dataField is where the event's first data line starts in body, -1 if it
// has none.
func dataField(body []byte) int {
	for at := 0; ; {
		if bytes.HasPrefix(body[at:], []byte("data:")) {
			return at
		}
		end := bytes.IndexByte(body[at:], '\n')
		if end < 0 {
			return -1
		}
		at += end + 1
	}
}
