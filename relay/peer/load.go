package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LoadEnv names the environment variable that, set to 1, gives the stdio
// upstream its load-test tools (see addLoad) and taps its wire: it counts,
// on the bytes of its streams, every sampling request it sends and every
// response it reads back to each. The SDK drops a response to a request it
// no longer waits for without a word, so only the wire shows a request
// answered twice. Unset, the upstream is as it was: other tests list its
// tools exactly.
const LoadEnv = "MCPXFW_PEER_LOAD"

// LoadOutcomes is what the sample_each tool reports: one outcome per
// pushed request, in the order they were given, and how long each took to
// be answered, in milliseconds.
type LoadOutcomes struct {
	Outcomes []SampleOutcome `json:"outcomes"`
	Millis   []int64         `json:"millis"`
}

// WireCounts is what the load_wire tool reports about one upstream session.
type WireCounts struct {
	// SamplingSent counts the sampling/createMessage requests written.
	SamplingSent int `json:"sampling_sent"`
	// AnsweredOnce, Unanswered and AnsweredTwice (or more) split them by
	// the number of responses read back with their id.
	AnsweredOnce  int `json:"answered_once"`
	Unanswered    int `json:"unanswered"`
	AnsweredTwice int `json:"answered_twice"`
	// Stray counts responses whose id no request of this upstream carried.
	Stray int `json:"stray"`
}

// addLoad, when LoadEnv is 1, registers the load-test tools on srv and
// returns in and out wrapped by the wire tap; otherwise it changes nothing.
// sample_each {requests, repeat, pad} pushes every params at once, each as
// its own sampling/createMessage request (repeat times each; pad bytes of
// filler added to the text of each one's first message, so a flood of
// large requests costs its caller nothing to send), and reports every
// outcome in order (LoadOutcomes), each also as a line of the
// MCPXFW_PEER_LOG file as soon as it arrives; load_wire reports the tap's
// counts (WireCounts). wait, called once the session has ended, waits a
// little for the outcomes still being recorded.
func addLoad(srv *mcp.Server, in io.ReadCloser, out io.WriteCloser) (io.ReadCloser, io.WriteCloser, func()) {
	if os.Getenv(LoadEnv) != "1" {
		return in, out, func() {}
	}
	w := &wire{sampling: map[string]int{}, requests: map[string]bool{}}
	l := &load{}
	srv.AddTool(&mcp.Tool{Name: "sample_each", Description: "Pushes every params at once as its own sampling/createMessage request; reports each outcome in order.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"requests":{"type":"array","items":{"type":"object"}},` +
			`"repeat":{"type":"integer"},"pad":{"type":"integer"}},"required":["requests"]}`)}, l.sampleEach)
	srv.AddTool(&mcp.Tool{Name: "load_wire", Description: "Reports how many sampling requests this upstream sent and how often each was answered, read on the wire.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, w.report)
	addRootsLoad(srv, l) // roots_each, roots_input_each: rootsload.go
	return &tapReader{ReadCloser: in, w: w}, &tapWriter{WriteCloser: out, w: w}, l.wait
}

// load tracks the pushes of sample_each still waiting for an answer.
type load struct {
	pushes sync.WaitGroup
}

// loadExitWait bounds how long the upstream waits, after its session
// ended, for answers already read to be recorded.
const loadExitWait = 5 * time.Second

func (l *load) wait() {
	done := make(chan struct{})
	go func() {
		l.pushes.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(loadExitWait):
	}
}

// sampleEach pushes each given params as its own sampling request, all at
// once, and waits for every one.
func (l *load) sampleEach(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Requests []json.RawMessage `json:"requests"`
		Repeat   int               `json:"repeat"`
		Pad      int               `json:"pad"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sample_each needs {requests}"}
	}
	var params []*mcp.CreateMessageWithToolsParams
	for _, raw := range args.Requests {
		for range max(args.Repeat, 1) {
			p := new(mcp.CreateMessageWithToolsParams)
			if err := json.Unmarshal(raw, p); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requests: " + err.Error()}
			}
			pad(p, args.Pad)
			params = append(params, p)
		}
	}
	out := LoadOutcomes{Outcomes: make([]SampleOutcome, len(params)), Millis: make([]int64, len(params))}
	var wg sync.WaitGroup
	for i, p := range params {
		l.pushes.Add(1)
		wg.Go(func() {
			defer l.pushes.Done()
			start := time.Now()
			res := sampleResult(req.Session.CreateMessageWithTools(ctx, p))
			out.Outcomes[i], out.Millis[i] = res.StructuredContent.(SampleOutcome), time.Since(start).Milliseconds()
			logOutcome(res)
		})
	}
	wg.Wait()
	text, _ := json.Marshal(out)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
}

// pad adds n bytes of filler to the text of p's first message, when that
// is one text block.
func pad(p *mcp.CreateMessageWithToolsParams, n int) {
	if n <= 0 || len(p.Messages) == 0 || len(p.Messages[0].Content) != 1 {
		return
	}
	if t, ok := p.Messages[0].Content[0].(*mcp.TextContent); ok {
		t.Text += " " + strings.Repeat("x", n)
	}
}

// wire counts, by JSON-RPC id, the sampling requests an upstream writes and
// the responses it reads back.
type wire struct {
	mu       sync.Mutex
	sampling map[string]int  // sampling request id -> responses read
	requests map[string]bool // every request id written
	stray    int
	// inPart and outPart hold a message not yet ended by its newline.
	inPart, outPart []byte
}

// frame is what the tap reads of a message.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// feed splits what passed one way into newline-ended messages (the stdio
// framing) and counts each; the rest waits for the next call.
func (w *wire) feed(part *[]byte, b []byte, fromPeer bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	*part = append(*part, b...)
	for {
		i := bytes.IndexByte(*part, '\n')
		if i < 0 {
			break
		}
		w.count((*part)[:i], fromPeer)
		*part = (*part)[i+1:]
	}
	*part = append([]byte(nil), *part...) // drop the consumed prefix
}

func (w *wire) count(line []byte, fromPeer bool) {
	var f frame
	if json.Unmarshal(line, &f) != nil || len(f.ID) == 0 || string(f.ID) == "null" {
		return // a notification, or not ours to judge
	}
	id := string(f.ID)
	switch {
	case fromPeer && f.Method != "":
		w.requests[id] = true
		if f.Method == "sampling/createMessage" {
			w.sampling[id] = 0
		}
	case !fromPeer && f.Method == "":
		if n, ok := w.sampling[id]; ok {
			w.sampling[id] = n + 1
		} else if !w.requests[id] {
			w.stray++
		}
	}
}

func (w *wire) report(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	w.mu.Lock()
	c := WireCounts{SamplingSent: len(w.sampling), Stray: w.stray}
	for _, n := range w.sampling {
		switch {
		case n == 0:
			c.Unanswered++
		case n == 1:
			c.AnsweredOnce++
		default:
			c.AnsweredTwice++
		}
	}
	w.mu.Unlock()
	text, _ := json.Marshal(c)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
}

// tapReader counts what the upstream reads: the firewall's messages.
type tapReader struct {
	io.ReadCloser
	w *wire
}

func (t *tapReader) Read(b []byte) (int, error) {
	n, err := t.ReadCloser.Read(b)
	if n > 0 {
		t.w.feed(&t.w.inPart, b[:n], false)
	}
	return n, err
}

// tapWriter counts what the upstream writes.
type tapWriter struct {
	io.WriteCloser
	w *wire
}

func (t *tapWriter) Write(b []byte) (int, error) {
	// Counted before the write: the answer may be read back before Write
	// returns.
	t.w.feed(&t.w.outPart, b, true)
	return t.WriteCloser.Write(b)
}
