package relay

import (
	"cmp"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A push with no host call to ride on goes to an HTTP host on its
// standalone stream, the GET the host opens once its session is
// initialized. The host opens it on its own time: an upstream that asks
// for the roots as soon as it is initialized (npm server-everything does)
// can ask before the host's GET has arrived, and the SDK then refuses the
// write at once ("stream not connected or already closed"). So a push the
// standalone stream refused waits for the host to open it, up to
// standaloneWait, and is sent on it then; a host that never opens one gets
// the refusal that long later.

// standaloneWait bounds how long a push waits for the host's standalone
// stream: a host opens it right after initializing, well within this.
const standaloneWait = 10 * time.Second

// hostStreams tells pushes waiting on a host session when that host opens
// its standalone stream. It keeps an entry only while a push waits.
type hostStreams struct {
	// bound is how long a push waits; zero means standaloneWait.
	bound time.Duration

	mu      sync.Mutex
	waiting map[string]*streamWait // by host session ID
}

// streamWait is the pushes waiting on one host session's next stream.
type streamWait struct {
	opened chan struct{} // closed when the host opens its standalone stream
	n      int           // pushes waiting
}

// expect returns a channel closed when the host of session id next opens
// its standalone stream, and the func to call once it is no longer waited
// on. Taken before a push is tried, it misses no stream opened after.
func (s *hostStreams) expect(id string) (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == nil {
		s.waiting = map[string]*streamWait{}
	}
	w := s.waiting[id]
	if w == nil {
		w = &streamWait{opened: make(chan struct{})}
		s.waiting[id] = w
	}
	w.n++
	return w.opened, func() { s.leave(id, w) }
}

func (s *hostStreams) leave(id string, w *streamWait) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.n--; w.n == 0 && s.waiting[id] == w {
		delete(s.waiting, id)
	}
}

// opened wakes the pushes waiting on session id.
func (s *hostStreams) opened(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.waiting[id]; w != nil {
		close(w.opened)
		delete(s.waiting, id)
	}
}

// watch reports each standalone stream a host opens through next. The SDK
// writes the stream's 200 while it holds the stream, and makes it
// writable before letting go: a push tried after the 200 is written
// waits for that, then finds the stream open.
func (s *hostStreams) watch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if r.Method != http.MethodGet || id == "" {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&openWriter{ResponseWriter: w, open: func() { s.opened(id) }}, r)
	})
}

// openWriter is a GET's response under watch.
type openWriter struct {
	http.ResponseWriter
	open func()
	once sync.Once
}

func (w *openWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK {
		w.once.Do(w.open)
	}
}

// Unwrap lets http.ResponseController flush the stream.
func (w *openWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// standalone asks the host on its standalone stream; over HTTP, a stream
// the host has not opened yet (or has lost) is waited for, up to
// standaloneWait (see above). A stdio host has no session ID and no such
// stream to wait for.
func (a sessionAsker) standalone(ctx context.Context, k *pipeline.Kind, params mcp.InputRequest) (mcp.InputResponse, error) {
	ctx = hostStream(ctx, true)
	id := a.host.ID()
	if a.streams == nil || id == "" {
		return a.ask(ctx, k, params)
	}
	wait, cancel := context.WithTimeout(ctx, cmp.Or(a.streams.bound, standaloneWait))
	defer cancel()
	for {
		opened, done := a.streams.expect(id)
		res, err := a.ask(ctx, k, params)
		if !undelivered(err) {
			done()
			return res, err
		}
		select {
		case <-opened:
			done()
		case <-wait.Done():
			done()
			return res, err
		}
	}
}
