package review

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
)

// silencer is a TCP front for the test cluster that forwards connections
// until silence, then drops those it forwarded and holds every new one
// open without answering, as a server behind a cut network does.
type silencer struct {
	ln     net.Listener
	socket string
	silent atomic.Bool
	starts atomic.Int32 // connections begun (StartupMessage) while silent
	mu     sync.Mutex
	open   []net.Conn
}

func newSilencer(t *testing.T, socket string) *silencer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &silencer{ln: ln, socket: socket}
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.open {
			c.Close()
		}
	})
	go f.serve()
	return f
}

func (f *silencer) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.open = append(f.open, c)
		f.mu.Unlock()
		if f.silent.Load() {
			go f.hold(c)
			continue
		}
		up, err := net.Dial("unix", f.socket)
		if err != nil {
			c.Close()
			continue
		}
		f.mu.Lock()
		f.open = append(f.open, up)
		f.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

// hold reads what a client sends first and never answers: the client's
// connect times out. It counts connections begun (a StartupMessage, of
// protocol 3.0), not pgx's cancel requests for queries it gave up on.
func (f *silencer) hold(c net.Conn) {
	var head [8]byte
	if _, err := io.ReadFull(c, head[:]); err == nil && binary.BigEndian.Uint32(head[4:]) == 3<<16 {
		f.starts.Add(1)
	}
}

// silence drops every forwarded connection and answers no new one.
func (f *silencer) silence() {
	f.silent.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.open {
		c.Close()
	}
	f.open = nil
}

// TestWriteGivesUpOnASilentServer: the server stops answering (a cut
// network) while serve runs. An escalation's write finds its pooled
// connections dead and dials once: a dial that timed out says the server
// is out of reach, and dialling again, once per connection the pool might
// hold, would hold the server's turn and keep the request waiting several
// connect timeouts before it is refused.
func TestWriteGivesUpOnASilentServer(t *testing.T) {
	postgresOnly(t, "store.url's connection")
	dir := stateDir(t)
	u, err := url.Parse(testPostgres.url)
	if err != nil {
		t.Fatal(err)
	}
	front := newSilencer(t, filepath.Join(u.Query().Get("host"), ".s.PGSQL.5432"))
	schemaURL, err := testPostgres.schemaURL(dir)
	if err != nil {
		t.Fatal(err)
	}
	su, _ := url.Parse(schemaURL)
	q := su.Query()
	q.Del("host")
	q.Set("connect_timeout", "1")
	su.Host, su.RawQuery = front.ln.Addr().String(), q.Encode()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := OpenURL(ctx, su.String(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	quiet(t, s)
	if _, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-before", Server: "a", Stage: StageRequest,
		Outcome: "pass"}, Usage: Usage{Requests: 1}}); err != nil {
		t.Fatal(err)
	}

	front.silence()
	it := sampleItem("a")
	_, err = s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-silent", Server: "a", Stage: StageRequest,
		Outcome: "escalate"}, Usage: Usage{Requests: 1, RequestedTokens: 64, Tokens: 64}, Review: &it, ReviewTimeout: time.Hour})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("escalation while the server is silent: %v; want ErrUnavailable", err)
	}
	if n := front.starts.Load(); n != 1 {
		t.Errorf("the write began %d connections to the silent server; want one", n)
	}
}
