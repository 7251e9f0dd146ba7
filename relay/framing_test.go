package relay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// smuggled is a request an upstream hides between the tokens of its
// answer: on a line of its own, a host reading by lines would take it for
// the firewall's.
const smuggled = `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"smuggled"}}],"maxTokens":1}}`

// TestFramePathAnswerIsOneLine: an upstream's answer to a host's call on
// the frame path that holds line ends between its tokens (in a content
// item, in _meta, in an error's data), or line separators in its strings,
// reaches a host reading by lines as one line: the answer, compacted,
// every member in its place, and nothing else.
func TestFramePathAnswerIsOneLine(t *testing.T) {
	cases := []struct {
		name, tool, raw, want string
	}{
		{"content", "answer_raw", "{\"content\":[{\"type\":\"text\",\"text\":\"x\",\"_meta\":\n" + smuggled + "\n}]}",
			`{"content":[{"type":"text","text":"x","_meta":` + smuggled + `}]}`},
		{"meta", "answer_raw", "{\"content\":[],\r\n\"_meta\":{\"vendor/k\":\r\n" + smuggled + "\r\n,\"io.modelcontextprotocol/x\":1}}",
			`{"content":[],"_meta":{"vendor/k":` + smuggled + `}}`},
		{"carriage returns", "answer_raw", "{\"content\":[\r{\"type\":\"text\",\"text\":\"x\"}\r]}",
			`{"content":[{"type":"text","text":"x"}]}`},
		{"separators", "answer_raw", "{\"content\":[{\"type\":\"text\",\"text\":\"a\u2028b\u2029c\u0085d\"}]}",
			`{"content":[{"type":"text","text":"a\u2028b\u2029c\u0085d"}]}`},
	}
	p := newTestProxy(t, "a", "b")
	h := newLineHost(t, p)
	if _, err := h.call("b__echo", nil); err != nil { // both upstreams run: the next calls take the frame path
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := framed(p)
			got, err := h.call("a__"+tc.tool, []byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			want := `{"jsonrpc":"2.0","id":"call-` + itoa(h.next) + `","result":` + tc.want + `}`
			if diff := cmp.Diff(tokens(t, []byte(want)), tokens(t, got)); diff != "" {
				t.Errorf("the host read (-want +got):\n%s", diff)
			}
			if framed(p) != n+1 {
				t.Errorf("the call did not take the frame path")
			}
		})
	}
	t.Run("error", func(t *testing.T) {
		got, err := h.call("a__fail_raw", []byte("[\n"+smuggled+"\n]"))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error *jsonrpc.Error `json:"error"`
		}
		if json.Unmarshal(got, &e) != nil || e.Error == nil || e.Error.Code != -32000 ||
			!bytes.Equal(e.Error.Data, []byte("["+smuggled+"]")) {
			t.Errorf("the host read %s, want the upstream's error, compacted", got)
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// tokens is a JSON value as its tokens in order (strings with their
// escapes resolved, numbers as written): two values with the same tokens
// are the same value, members in the same order.
func tokens(t *testing.T, v []byte) []any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var out []any
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		out = append(out, tok)
	}
}

// TestOneLine: what the framing rule writes of one frame.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ name, frame, want string }{
		{"one line", `{"a":[1,"x y"]}` + "\n", `{"a":[1,"x y"]}` + "\n"},
		{"spaces", `{ "a" : [ 1 , 2 ] }` + "\n", `{ "a" : [ 1 , 2 ] }` + "\n"},
		{"newlines", "{\"a\":\n[1,\n2]}\n", `{"a":[1,2]}` + "\n"},
		{"carriage returns", "{\"a\":\r[1,\r\n2]}\r\n", `{"a":[1,2]}` + "\n"},
		{"around", "  {\"a\":1}  \n", `{"a":1}` + "\n"},
		{"separators", "{\"a\":\"x\u2028y\u2029z\u0085\"}\n", `{"a":"x\u2028y\u2029z\u0085"}` + "\n"},
		{"separators and newlines", "{\"a\":\n\"\u2028\"}\n", `{"a":"\u2028"}` + "\n"},
		{"an array", "[{},\n{}]\n", "[{},{}]\n"},
		{"two messages", "{\"a\":1}\n{\"b\":2}\n", ""},
		{"two on one line", "{\"a\":1}{\"b\":2}\n\n", ""},
		{"not JSON", "{\"a\":\n\n", ""},
		{"no line end", `{"a":1}`, ""},
		{"a scalar", "\n1\n", ""},
		{"empty", "\n", ""},
		{"nothing", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := oneLine([]byte(tc.frame))
			if tc.want == "" {
				if !errors.Is(err, errFraming) {
					t.Fatalf("wrote %q, want it refused", got)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	frame := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"é—“x”"}]}}` + "\n")
	if got, _ := oneLine(frame); &got[0] != &frame[0] {
		t.Error("a frame on one line was copied")
	}
}

// readLines reads r as a host reading by lines does, each line one
// message: one per frame written.
func readLines(t *testing.T, r io.Reader, n int) [][]byte {
	t.Helper()
	br := bufio.NewReader(r)
	var lines [][]byte
	for range n {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %q: %v", lines, err)
		}
		lines = append(lines, line[:len(line)-1])
	}
	return lines
}

// writerFrames are frames as the SDK or the frame path may write them,
// with the lines a host must read of each; "" refused.
var writerFrames = []struct{ frame, want string }{
	{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[\n" + smuggled + "\n]}}\n",
		`{"jsonrpc":"2.0","id":1,"result":{"content":[` + smuggled + `]}}`},
	{"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"a\":\"\u2028\"}}\n", `{"jsonrpc":"2.0","method":"m","params":{"a":"\u2028"}}`},
	{"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n" + smuggled + "\n", ""},
	{"{\"jsonrpc\":\"2.0\",\"method\":\n\n", ""},
	{`{"jsonrpc":"2.0","method":"last"}` + "\n", `{"jsonrpc":"2.0","method":"last"}`},
}

// TestHostWriterOneLinePerFrame: every frame written to a host over stdio,
// by the SDK's connection (hostWriter) or the frame path (send), reaches
// it as one line, or not at all; a refused frame from the frame path is
// reported to its caller.
func TestHostWriterOneLinePerFrame(t *testing.T) {
	r, w := io.Pipe()
	h := newHostWire(&Proxy{log: zap.NewNop()}, io.NopCloser(strings.NewReader("")), w)
	wrote := make(chan struct{})
	defer func() {
		_ = r.Close() // a frame written as several lines leaves some unread
		<-wrote
	}()
	go func() {
		defer close(wrote)
		for i, f := range writerFrames {
			if i%2 == 0 {
				_, _ = hostWriter{h}.Write([]byte(f.frame))
			} else if sent := h.send([]byte(f.frame)); sent != (f.want != "") {
				t.Errorf("send(%q) = %v", f.frame, sent)
			}
		}
	}()
	checkLines(t, r)
}

// checkLines reads the lines writerFrames must make.
func checkLines(t *testing.T, r io.Reader) {
	t.Helper()
	var want [][]byte
	for _, f := range writerFrames {
		if f.want != "" {
			want = append(want, []byte(f.want))
		}
	}
	if diff := cmp.Diff(want, readLines(t, r, len(want))); diff != "" {
		t.Errorf("lines read (-want +got):\n%s", diff)
	}
}

// TestChildStdinOneLinePerFrame: every frame written to an upstream's
// stdin, by the SDK's connection and frameScreen (Write) or the frame path
// (tryWrite), reaches it as one line, or not at all. The upstream here is
// cat, which writes back what it reads.
func TestChildStdinOneLinePerFrame(t *testing.T) {
	cmd := exec.Command("cat")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w, err := startChild(&mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i, f := range writerFrames {
		var written bool
		if i%2 == 0 {
			_, err := w.Write([]byte(f.frame))
			written = err == nil
		} else {
			written = w.tryWrite([]byte(f.frame))
		}
		if written != (f.want != "") {
			t.Errorf("frame %q written: %v", f.frame, written)
		}
	}
	checkLines(t, out)
}

// TestSDKEncoderKeepsSeparators: the SDK's encoder (encoding/json) compacts
// a raw value it is given, but leaves U+2028 and U+2029 in it raw: the
// framing rule must escape them where the bytes leave, whatever encoded
// them.
func TestSDKEncoderKeepsSeparators(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(1))
	b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: json.RawMessage("{\"a\" :\r\n [1,\n 2], \"s\":\"\u2028\"}")})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":[1,2],\"s\":\"\u2028\"}}" {
		t.Fatalf("the SDK encoded %q", b)
	}
	line, err := oneLine(append(b, '\n'))
	if err != nil || string(line) != `{"jsonrpc":"2.0","id":1,"result":{"a":[1,2],"s":"\u2028"}}`+"\n" {
		t.Fatalf("written as %q, %v", line, err)
	}
}
