package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// upstreamMessageLimit is the most serve reads of one message from an
// upstream (relay's maxFrame, the SDK's 16 MiB cap on a stdio line and on
// an event).
const upstreamMessageLimit = 16 << 20

// endlessStop is where the endless answer gives up if serve never stops
// reading it, so that the test ends either way: far past the limit and
// what the sockets between the two may buffer (here up to 32 MiB for
// serve's receiving end, net.ipv4.tcp_rmem, and 4 MiB for the sending one).
const endlessStop = 8 * upstreamMessageLimit

// hostileUpstream is a streamable HTTP server of one tool, echo, written
// by hand so that it can answer as no SDK would: a call of echo whose text
// names one of its answers gets it as an application/json body: "size:N",
// a result of exactly N bytes, chunked; "declared:N", the same with
// Content-Length; "endless", a body that never ends (until serve closes
// the connection, or endlessStop); "event:N", the result as the one event
// of an event stream; "error:N", a 400 whose body is N bytes. Any other
// text is echoed. The count of bytes written of each answer it makes
// (the socket took them: serve read them or the kernel buffered them) is
// sent on written once the answer is done.
type hostileUpstream struct {
	written chan int64
}

func newHostileUpstream(t testing.TB) (*hostileUpstream, string) {
	u := &hostileUpstream{written: make(chan int64, 8)}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return u, srv.URL + "/mcp"
}

// rpcMessage is what hostileUpstream reads of a message.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
		Arguments       struct {
			Text string `json:"text"`
		} `json:"arguments"`
	} `json:"params"`
}

func (u *hostileUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var msg rpcMessage
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed) // no stream of its own
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil || msg.ID == nil {
		w.WriteHeader(http.StatusAccepted) // a notification, or an answer
		return
	}
	kind, size, _ := strings.Cut(msg.Params.Arguments.Text, ":")
	n, err := strconv.Atoi(size)
	switch {
	case msg.Method != "tools/call":
		answerJSON(w, msg.ID, resultOf(msg))
	case kind == "endless":
		u.written <- writeAnswer(w, msg.ID, endlessStop, "")
	case err == nil && slices.Contains([]string{"size", "declared", "event", "error"}, kind):
		u.written <- writeAnswer(w, msg.ID, n, kind)
	default:
		text, _ := json.Marshal(msg.Params.Arguments.Text)
		answerJSON(w, msg.ID, `{"content":[{"type":"text","text":`+string(text)+`}]}`)
	}
}

// resultOf is the result of a request other than a tool call, or "" for
// one the server does not know.
func resultOf(msg rpcMessage) string {
	switch msg.Method {
	case "initialize":
		version, _ := json.Marshal(msg.Params.ProtocolVersion)
		return `{"protocolVersion":` + string(version) + `,"capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`
	case "tools/list":
		return `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`
	case "ping":
		return `{}`
	}
	return ""
}

// answerJSON answers id with result, or with method-not-found for "".
func answerJSON(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	if result == "" {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32601,"message":"method not found"}}`)
		return
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+result+`}`)
}

// wait is the count of the answer being written, once it is done.
func (u *hostileUpstream) wait(t *testing.T) int64 {
	t.Helper()
	select {
	case n := <-u.written:
		return n
	case <-time.After(time.Minute):
		t.Fatal("the upstream's answer was still being written a minute after the call ended")
		return 0
	}
}

// writeAnswer writes an answer of n bytes in all, as kind says, a MiB at a
// time, its one text block (or error message) of x's, and returns how many
// bytes were written before the end or the first failed write.
func writeAnswer(w http.ResponseWriter, id json.RawMessage, n int, kind string) int64 {
	head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`
	tail := `"}]}}`
	w.Header().Set("Content-Type", "application/json")
	switch kind {
	case "declared":
		w.Header().Set("Content-Length", strconv.Itoa(n))
	case "event":
		w.Header().Set("Content-Type", "text/event-stream")
		head, tail = "data: "+head, tail+"\n\n"
	case "error":
		head, tail = `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32000,"message":"`, `"}}`
		w.WriteHeader(http.StatusBadRequest) // not 500: the SDK reads no body of a status it retries
	}
	written, _ := io.WriteString(w, head)
	total := int64(written)
	chunk := bytes.Repeat([]byte{'x'}, 1<<20)
	for left := n - len(head) - len(tail); left > 0; left -= len(chunk) {
		k, err := w.Write(chunk[:min(left, len(chunk))])
		total += int64(k)
		if err != nil {
			return total
		}
	}
	k, _ := io.WriteString(w, tail)
	return total + int64(k)
}

// TestHTTPUpstreamAnswerBounded: an HTTP upstream's answer is read to at
// most 16 MiB. Past it (a JSON body that turns out larger, one that says
// it is larger, one that never ends, an event of an event stream, the body
// of an error status) the host's call fails with -32603 naming the server
// and the limit; serve stops reading (it logs having read no more than the
// limit and a read's worth, and the endless writer's connection is cut,
// where serve used to read on until it ran out of memory); and the server
// stays usable. An answer just under the limit reaches the host whole.
func TestHTTPUpstreamAnswerBounded(t *testing.T) {
	up, endpoint := newHostileUpstream(t)
	over := strconv.Itoa(upstreamMessageLimit + 1)
	tests := []struct {
		name, text string
		refused    bool
		sizeField  string // the log's field for the size seen
	}{
		{"over the limit", "size:" + over, true, "bytes_read"},
		{"declared over the limit", "declared:" + over, true, "content_length"},
		{"endless", "endless", true, "bytes_read"},
		{"an event over the limit", "event:" + over, true, "bytes_read"},
		{"an error status over the limit", "error:" + over, true, "bytes_read"},
		{"under the limit", "size:" + strconv.Itoa(upstreamMessageLimit-64<<10), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, repoPath(t, "policies"), time.Minute, fmt.Sprintf("  peer:\n    url: %s\n", endpoint))
			h := startFirewall(t, cfg, answerWith(hostAnswer))
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			res, err := h.CallTool(ctx, "echo", map[string]any{"text": tt.text})
			written := up.wait(t)
			if tt.refused {
				wantTooLarge(t, err)
				if written >= endlessStop {
					t.Errorf("serve read on: the upstream wrote %d bytes, all it had", written)
				}
				t.Logf("the upstream wrote %d bytes (the limit is %d)", written, upstreamMessageLimit)
			} else if err != nil || len(res.Text) < upstreamMessageLimit-128<<10 || strings.Trim(res.Text, "x") != "" {
				t.Fatalf("an answer under the limit: %v", err)
			}
			if res, err := h.CallTool(ctx, "echo", map[string]any{"text": "still here"}); err != nil || res.Text != "still here" {
				t.Fatalf("echo after: %+v, %v", res, err)
			}
			_ = h.Close()
			wantRefusalLogged(t, filepath.Join(filepath.Dir(cfg), "serve.log"), tt.sizeField)
		})
	}
}

func wantTooLarge(t *testing.T, err error) {
	t.Helper()
	var pe *peer.Error
	if !errors.As(err, &pe) {
		t.Fatalf("the call did not fail with a JSON-RPC error: %v", err)
	}
	want := fmt.Sprintf("upstream peer: its answer exceeds %d bytes", upstreamMessageLimit)
	if pe.Code != -32603 || !strings.HasPrefix(pe.Message, want) || bytes.Contains(pe.Data, []byte("xxx")) {
		t.Errorf("error %d %q %s; want -32603 starting %q", pe.Code, pe.Message, pe.Data, want)
	}
}

// wantRefusalLogged: serve's log has a warning for the refusal, if there
// was one (sizeField names the size it saw), naming the server, the size
// and the limit.
func wantRefusalLogged(t *testing.T, path, sizeField string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	for line := range bytes.Lines(raw) {
		var entry map[string]any
		if json.Unmarshal(line, &entry) != nil || entry["msg"] != "upstream answer refused: larger than the limit" {
			continue
		}
		seen++
		t.Logf("serve logged: %s", bytes.TrimSpace(line))
		size, ok := entry[sizeField].(float64)
		read := sizeField == "bytes_read" && size > upstreamMessageLimit+64<<10 // read past the limit
		if entry["server"] != "peer" || entry["limit_bytes"] != float64(upstreamMessageLimit) || !ok || size <= upstreamMessageLimit || read {
			t.Errorf("refusal logged as %s", line)
		}
	}
	if want := map[bool]int{false: 0, true: 1}[sizeField != ""]; seen != want {
		t.Errorf("%d refusals logged, want %d", seen, want)
	}
}
