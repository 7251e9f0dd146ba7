package relay

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// dupKeyParams is a sampling request the SDK would decode as maxTokens
// 100000: only the raw bytes show the duplicate key.
const dupKeyParams = `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5,"maxTokens":100000}`

// TestHTTPUpstreamRawPush: an HTTP upstream pushes exact bytes inside a
// call. A duplicate key is refused on the bytes (-32602,
// json.duplicate-key), the refusal reaches the upstream and the host is
// never asked; a valid push is answered by the host.
func TestHTTPUpstreamRawPush(t *testing.T) {
	url := startHTTPUpstream(t)
	tests := []struct {
		name     string
		raw      string
		wantCode int64
	}{
		{"duplicate key", dupKeyParams, refusal.CodeInvalidParams},
		{"valid", textRequest("Say hello, raw, over HTTP."), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, asked := httpUpstreamHost(t, url, "2025-11-25")
			res, err := host.CallTool(t.Context(), rawArgs("sample_raw", tt.raw))
			if err != nil {
				t.Fatalf("sample_raw: %v", err)
			}
			var got peer.SampleOutcome
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
				t.Fatal(err)
			}
			if tt.wantCode == 0 {
				wantAnswered(t, got, asked)
				return
			}
			if got.Error == nil {
				t.Fatalf("upstream got a completion: %s", got.Completion)
			}
			wantRefused(t, got.Error.Code, got.Error.Data, asked)
		})
	}
}

// TestHTTPUpstreamRawInputRequest: the same for a 2026-07-28 upstream
// whose input_required result carries the exact bytes as a sampling entry:
// a duplicate key fails the host's call with -32602 before the host is
// asked; a valid entry makes the round trip.
func TestHTTPUpstreamRawInputRequest(t *testing.T) {
	url := startHTTPUpstream(t)
	t.Run("duplicate key", func(t *testing.T) {
		host, asked := httpUpstreamHost(t, url, modernEra)
		res, err := host.CallTool(t.Context(), rawArgs("sample_input_raw", dupKeyParams))
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Fatalf("call did not fail with a JSON-RPC error: %v %v", res, err)
		}
		wantRefused(t, we.Code, we.Data, asked)
	})
	t.Run("valid", func(t *testing.T) {
		host, asked := httpUpstreamHost(t, url, modernEra)
		res, err := host.CallTool(t.Context(), rawArgs("sample_input_raw", textRequest("Say hello, raw, in 2026.")))
		if err != nil {
			t.Fatalf("sample_input_raw: %v", err)
		}
		var got peer.InputOutcome
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil || len(got.Completions) != 1 {
			t.Fatalf("result %v: %v", res.Content[0], err)
		}
		wantAnswered(t, peer.SampleOutcome{Completion: got.Completions[0]}, asked)
	})
}

// askedHosts counts the prompts a host was asked.
type askedHosts struct {
	mu     sync.Mutex
	prompt []string
}

func (a *askedHosts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.prompt)
}

// httpUpstreamHost connects a host at version to a firewall whose only
// upstream is the HTTP one at url.
func httpUpstreamHost(t *testing.T, url, version string) (*mcp.ClientSession, *askedHosts) {
	t.Helper()
	p := newTestProxy(t, "peer")
	p.cfg.Upstreams[0] = defaultOffers(Upstream{Name: "peer", Label: "test peer", URL: url})
	asked := &askedHosts{}
	return connectHost(t, p, version, answeringHost("host", &asked.prompt, &asked.mu)), asked
}

func rawArgs(tool, raw string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"raw_b64": base64.StdEncoding.EncodeToString([]byte(raw))}}
}

func wantAnswered(t *testing.T, got peer.SampleOutcome, asked *askedHosts) {
	t.Helper()
	if got.Error != nil || !strings.Contains(string(got.Completion), "answer from host") {
		t.Errorf("outcome %+v, completion %s", got.Error, got.Completion)
	}
	if n := asked.count(); n != 1 {
		t.Errorf("host asked %d times, want 1", n)
	}
}

func wantRefused(t *testing.T, code int64, data json.RawMessage, asked *askedHosts) {
	t.Helper()
	var d refusal.Data
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("error data %s: %v", data, err)
	}
	if code != refusal.CodeInvalidParams || !slices.Contains(d.ReasonCodes, "json.duplicate-key") {
		t.Errorf("refused with %d %v, want %d with json.duplicate-key", code, d.ReasonCodes, refusal.CodeInvalidParams)
	}
	if n := asked.count(); n != 0 {
		t.Errorf("host asked %d times, want never", n)
	}
}

// fakeJudge drops payloads that mention "drop", replaces those that
// mention "swap" and keeps the rest, recording every payload it is given.
type fakeJudge struct{ seen []string }

func (j *fakeJudge) rewrite(payload []byte) ([]byte, bool, error) {
	j.seen = append(j.seen, string(payload))
	switch {
	case bytes.Contains(payload, []byte("drop")):
		return nil, false, nil
	case bytes.Contains(payload, []byte("swap")):
		return []byte(`{"swapped":1}`), false, nil
	}
	return payload, true, nil
}

// TestSSEFilterFraming: every event the filter keeps comes out byte for
// byte (CRLF, comments, priming events, named events); a dropped event
// keeps its id and loses its data lines; a replaced one gets one data line
// where its first stood, ended as that line was. Multi-line data is screened
// as the SDK joins it. Reading one byte at a time (every event split
// across reads) changes nothing.
func TestSSEFilterFraming(t *testing.T) {
	in := ": keepalive comment\r\n\r\n" +
		"id: 0\ndata:\n\n" + // priming: no data to screen
		"event: message\r\nid: 1\r\ndata: {\"a\":\r\ndata:  \"keep\"} \r\n\r\n" +
		"id: 2\ndata: {\"drop\":1}\n: note\ndata: {}\nretry: 5\n\n" +
		"event: ping\ndata: {\"drop\":\"ignored by the SDK\"}\n\n" +
		"id: 3\r\ndata: {\"swap\":\r\ndata: 2}\r\n\r\n" +
		"data: {\"swap\":3}" // the stream ends mid-event
	want := ": keepalive comment\r\n\r\n" +
		"id: 0\ndata:\n\n" +
		"event: message\r\nid: 1\r\ndata: {\"a\":\r\ndata:  \"keep\"} \r\n\r\n" +
		"id: 2\n: note\nretry: 5\n\n" +
		"event: ping\ndata: {\"drop\":\"ignored by the SDK\"}\n\n" +
		"id: 3\r\ndata: {\"swapped\":1}\r\n\r\n" +
		"data: {\"swapped\":1}\n"
	wantSeen := []string{"{\"a\":\n\"keep\"}", "{\"drop\":1}\n{}", "{\"swap\":\n2}", "{\"swap\":3}"}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":       func(r io.Reader) io.Reader { return r },
		"byte a read": iotest.OneByteReader,
		"half a read": iotest.HalfReader,
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			var j fakeJudge
			f := newSSEFilter(io.NopCloser(wrap(strings.NewReader(in))), j.rewrite, nil)
			got, err := io.ReadAll(iotest.OneByteReader(f))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("out:\n%q\nwant:\n%q", got, want)
			}
			if !slices.Equal(j.seen, wantSeen) {
				t.Errorf("screened %q, want %q", j.seen, wantSeen)
			}
		})
	}
}

// TestSSEFilterStreams: each event is delivered as soon as it is complete,
// while the stream stays open.
func TestSSEFilterStreams(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var j fakeJudge
	f := newSSEFilter(pr, j.rewrite, nil)
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		n, _ := f.Read(buf)
		got <- string(buf[:n])
	}()
	if _, err := io.WriteString(pw, "id: 1\ndata: {\"x\":"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(pw, "1}\n\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "id: 1\ndata: {\"x\":1}\n\n" {
			t.Errorf("first read %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event was held back")
	}
}

// TestSSEFilterEventTooLarge: an event larger than rawjson.MaxFrame is not
// buffered: the stream is read no further than the bound (and a read's
// worth), closed, and ends with the refusal as its last event; a stream
// that answers no call breaks instead.
func TestSSEFilterEventTooLarge(t *testing.T) {
	var j fakeJudge
	big := "data: " + strings.Repeat("x", rawjson.MaxFrame) + "\n\n"
	for _, answers := range []bool{true, false} {
		src := &countingBody{r: strings.NewReader("id: 1\n\n" + big + "id: 2\ndata: {}\n\n")}
		var seen int64
		refuse := func(n int64, declared bool) ([]byte, error) {
			seen = n
			if !answers {
				return nil, errTooLarge
			}
			return []byte(`{"refused":1}`), nil
		}
		got, err := io.ReadAll(newSSEFilter(src, j.rewrite, refuse))
		want, wantErr := "id: 1\n\ndata: {\"refused\":1}\n\n", error(nil)
		if !answers {
			want, wantErr = "id: 1\n\n", errTooLarge
		}
		if string(got) != want || !errors.Is(err, wantErr) {
			t.Errorf("read %q, err %v; want %q, %v", got, err, want, wantErr)
		}
		if !src.closed || src.n > rawjson.MaxFrame+64<<10 || seen <= rawjson.MaxFrame {
			t.Errorf("closed %v after %d bytes read, %d seen", src.closed, src.n, seen)
		}
	}
}

// countingBody is a response body that counts what was read of it.
type countingBody struct {
	r      io.Reader
	n      int64
	closed bool
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingBody) Close() error {
	c.closed = true
	return nil
}

// TestScreeningTransport: over a real HTTP server, a refused push in an
// event stream or a batch is answered by a POST carrying the session and
// protocol version of the request that opened the stream, and the SDK
// never sees it; a refused input_required result in a JSON body becomes
// the refusal for its id; everything else passes byte for byte.
func TestScreeningTransport(t *testing.T) {
	bad := json.RawMessage(`{"bad":true}`)
	refuse := func(_ context.Context, _ *pipeline.Kind, params json.RawMessage) *jsonrpc.Error {
		if bytes.Contains(params, []byte("bad")) {
			return &jsonrpc.Error{Code: refusal.CodeInvalidParams, Message: "refused"}
		}
		return nil
	}
	push := func(id int, params string) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"sampling/createMessage","params":` + params + `}`
	}
	inputs := `{"jsonrpc":"2.0","id":9,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"sampling/createMessage","params":` + string(bad) + `}}}}`
	note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`
	tests := []struct {
		name, contentType, body, want string
		answers                       []string
	}{
		{"sse push", "text/event-stream",
			"id: 5\ndata: " + push(1, string(bad)) + "\n\nid: 6\ndata: " + push(2, "{}") + "\n\n",
			"id: 5\n\nid: 6\ndata: " + push(2, "{}") + "\n\n",
			[]string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"refused"}}`}},
		{"json input_required", "application/json", inputs,
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"refused"}}`, nil},
		{"json batch", "application/json; charset=utf-8",
			"[" + push(3, string(bad)) + ", " + note + "," + push(4, "{}") + "]",
			"[" + note + "," + push(4, "{}") + "]",
			[]string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"refused"}}`}},
		{"json passes", "application/json", " " + note + "\n", " " + note + "\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var answers []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					b, _ := io.ReadAll(r.Body)
					if r.Header.Get("Mcp-Session-Id") != "s-1" || r.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
						t.Errorf("answer headers %v", r.Header)
					}
					mu.Lock()
					answers = append(answers, string(b))
					mu.Unlock()
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", tt.contentType)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			client := &http.Client{Transport: &screeningTransport{base: http.DefaultTransport, log: zap.NewNop(), guard: guard{screen: refuse, inputs: refuse}}}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
			req.Header.Set("Mcp-Session-Id", "s-1")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil || string(got) != tt.want {
				t.Errorf("body %q (%v), want %q", got, err, tt.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(answers, tt.answers) {
				t.Errorf("answers %q, want %q", answers, tt.answers)
			}
		})
	}
}

// TestScreeningTransportBoundsBodies: over a real HTTP server, every body
// the SDK or the HTTP client may read is cut one byte past rawjson.MaxFrame, and
// what was sent past that point is never read (the server's writes stop
// within rawjson.MaxFrame and what the sockets buffer, a body that never ends
// included). A body answering a call reads as the firewall's refusal of
// that call; one answering no call, or a redirect's, fails with
// errTooLarge. A body at the bound passes whole.
func TestScreeningTransportBoundsBodies(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big"}}`
	refused := `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"upstream big: its answer exceeds 16777216 bytes, the most the firewall reads of one message; refused","data":{"reason_codes":["answer-too-large"]}}}`
	tests := []struct {
		name    string
		status  int
		declare bool
		size    int64 // -1: never ends
		get     bool  // the request is the standalone GET, which answers no call
		want    string
		wantErr error
	}{
		{"json over the bound", 200, false, rawjson.MaxFrame + 1, false, refused, nil},
		{"json declared over the bound", 200, true, rawjson.MaxFrame + 1, false, refused, nil},
		{"json that never ends", 200, false, -1, false, refused, nil},
		{"error status over the bound", 400, false, rawjson.MaxFrame + 1, false, refused, nil},
		{"json answering no call", 200, false, rawjson.MaxFrame + 1, true, "", errTooLarge},
		{"unfollowed redirect over the bound", 300, false, rawjson.MaxFrame + 1, false, "", errTooLarge},
		{"json at the bound", 200, false, rawjson.MaxFrame, false, "", nil},
		{"json declared at the bound", 200, true, rawjson.MaxFrame, false, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			written := make(chan int64, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				written <- writeXs(w, tt.status, tt.declare, tt.size)
			}))
			defer srv.Close()
			tr := &screeningTransport{base: http.DefaultTransport, server: "big", log: zap.NewNop()}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(call))
			if tt.get {
				req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
			}
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if n := <-written; n >= 2*rawjson.MaxFrame {
				t.Errorf("the server wrote %d bytes", n)
			}
			switch {
			case !errors.Is(err, tt.wantErr):
				t.Errorf("read %d bytes, err %v; want %v", len(got), err, tt.wantErr)
			case tt.want == "" && tt.wantErr == nil && (int64(len(got)) != tt.size || strings.Trim(string(got), "x") != ""):
				t.Errorf("read %d bytes, want the %d sent", len(got), tt.size)
			case tt.want != "" && string(got) != tt.want:
				t.Errorf("read %.200q, want %q", got, tt.want)
			}
		})
	}
}

// writeXs answers with status and size x's (without end, for -1: until a
// write fails, or 4 × rawjson.MaxFrame), a MiB at a time, declaring the length
// if told to; it returns how many bytes it wrote.
func writeXs(w http.ResponseWriter, status int, declare bool, size int64) int64 {
	w.Header().Set("Content-Type", "application/json")
	if declare {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.WriteHeader(status)
	if size < 0 {
		size = 4 * rawjson.MaxFrame
	}
	chunk := bytes.Repeat([]byte{'x'}, 1<<20)
	var total int64
	for total < size {
		n, err := w.Write(chunk[:min(size-total, int64(len(chunk)))])
		total += int64(n)
		if err != nil {
			break
		}
	}
	return total
}

// TestPlainResponse: only a response the screen would pass unchanged is
// passed without being decoded; a request, an input_required result
// (however spelled), a batch, a name with an escape, or anything that is
// not valid JSON is screened.
func TestPlainResponse(t *testing.T) {
	tests := []struct {
		payload string
		plain   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a \"method\" of input"}]}}`, true},
		{` {"result":{"method":"sampling/createMessage"},"id":"x","jsonrpc":"2.0"} ` + "\n", true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"Method":"sampling/createMessage","params":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"m\u0065thod":"sampling/createMessage","params":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input\u005frequired"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{},"result":{"inputRequests":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"RESULT":{"inputRequests":{}}}`, false},
		{`[{"jsonrpc":"2.0","id":1,"result":{}}]`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}} {"method":"x"}`, false},
		{`"just a string"`, false},
	}
	for _, tt := range tests {
		if got := plainResponse([]byte(tt.payload)); got != tt.plain {
			t.Errorf("plainResponse(%s) = %v, want %v", tt.payload, got, tt.plain)
		}
	}
}

// FuzzPlainResponse: whatever the bytes, a payload passed undecoded as a
// plain response is one the full screen, decoding it with the SDK's own
// decoder, also passes unchanged without screening anything: never a
// request, never a result with input requests or a roots entry to fix.
func FuzzPlainResponse(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"maxTokens":5}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"roots/list"}}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"result":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		if !plainResponse(payload) {
			return
		}
		screened := func(context.Context, *pipeline.Kind, json.RawMessage) *jsonrpc.Error {
			t.Fatalf("a plain response was screened: %q", payload)
			return nil
		}
		tr := &screeningTransport{guard: guard{screen: screened, inputs: screened}}
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		out, keep, err := tr.screenOne(req, payload)
		if msg, derr := jsonrpc.DecodeMessage(payload); derr == nil {
			if _, ok := msg.(*jsonrpc.Response); !ok {
				t.Fatalf("a plain response decodes as %T: %q", msg, payload)
			}
		}
		if !keep || err != nil || !bytes.Equal(out, payload) {
			t.Fatalf("the screen changes a plain response: %q -> %q, %v", payload, out, err)
		}
	})
}
