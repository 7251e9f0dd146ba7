package relay

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
)

// TestEventsOneDataLine: every event a host is served on an event stream
// reaches a reader of events (which ends lines at '\n', '\r' and "\r\n")
// with one data line, one JSON message, whatever lay between its tokens;
// an event whose data cannot be made one line is not written, and its
// stream ends there.
func TestEventsOneDataLine(t *testing.T) {
	events := []struct{ data, want string }{
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[\n" + smuggled + "\n]}}", `{"jsonrpc":"2.0","id":1,"result":{"content":[` + smuggled + `]}}`},
		{"{\"jsonrpc\":\"2.0\",\r\"method\":\"m\",\r\n\"params\":{}}", `{"jsonrpc":"2.0","method":"m","params":{}}`},
		{`{"jsonrpc":"2.0","method":"as written", "params":{"a":"` + "\u2028" + `"}}`, `{"jsonrpc":"2.0","method":"as written", "params":{"a":"` + "\u2028" + `"}}`},
		{"", ""},
		{"{\"jsonrpc\":\"2.0\"}\ndata: " + smuggled, "refused"},
		{`{"jsonrpc":"2.0","method":"never"}`, "after the refusal"},
	}
	srv := httptest.NewServer(oneLineEvents(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, e := range events {
			// As the SDK writes an event (writeEvent): whole, in one write.
			if _, err := w.Write([]byte("event: message\nid: " + itoa(i) + "\ndata: " + e.data + "\n\n")); err != nil {
				return
			}
		}
	}), zap.NewNop()))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	var want [][]string
	for _, e := range events[:4] {
		want = append(want, []string{"event: message", "id: " + itoa(len(want)), "data: " + e.want})
	}
	if diff := cmp.Diff(want, readEvents(body)); diff != "" {
		t.Errorf("events read (-want +got):\n%s", diff)
	}
}

// readEvents splits an event stream into its events' lines, as a reader of
// events does.
func readEvents(stream []byte) [][]string {
	lines := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(stream)), "\n")
	var events [][]string
	var cur []string
	for _, l := range lines {
		if l == "" {
			if cur != nil {
				events = append(events, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	return events
}

// TestEventsJSONBodyAsWritten: a response that is not an event stream (a
// JSON body) passes as written.
func TestEventsJSONBodyAsWritten(t *testing.T) {
	body := "{\"a\":\n1}"
	srv := httptest.NewServer(oneLineEvents(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}), zap.NewNop()))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if !bytes.Equal(got, []byte(body)) {
		t.Errorf("got %q, want %q", got, body)
	}
}
