package review

import (
	"context"
	"database/sql"
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

	"go.uber.org/zap/zaptest"
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
	frozen []*atomic.Bool
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
		frozen := new(atomic.Bool)
		f.mu.Lock()
		f.frozen = append(f.frozen, frozen)
		f.mu.Unlock()
		go func() { forward(up, c, frozen); up.Close() }()
		go func() { forward(c, up, frozen); c.Close() }()
	}
}

// forward copies from src to dst until either fails, dropping what it
// reads once frozen is set: the connection stays open and nothing on it
// is ever answered again.
func forward(dst, src net.Conn, frozen *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !frozen.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// freeze makes every connection forwarded so far go silent without
// closing, as a peer that vanished does (a failover, a dropped route); new
// connections are forwarded as before.
func (f *silencer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fr := range f.frozen {
		fr.Store(true)
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

// openThroughFront opens a Store on dir's schema of the test cluster
// through a silencer, with a connect timeout of one second.
func openThroughFront(t *testing.T, dir string, lease time.Duration) (*silencer, *Store) {
	t.Helper()
	u, err := url.Parse(testPostgres.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	front := newSilencer(t, filepath.Join(u.Query().Get("host"), ".s.PGSQL.5432"))
	raw, err := schemaURL(testPostgres, dir)
	if err != nil {
		t.Fatal(err)
	}
	su, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := su.Query()
	q.Del("host")
	q.Set("connect_timeout", "1")
	su.Host, su.RawQuery = front.ln.Addr().String(), q.Encode()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := OpenURL(ctx, su.String(), zaptest.NewLogger(t), WithLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return front, s
}

// TestLeaseRenewedAfterItsConnectionVanished: the connections a replica
// holds go silent without closing (the server failed over, a route was
// dropped), while new ones work. A renewal sent on a dead connection must
// give up in time and the next one use a working connection: waiting on
// it until the kernel gives up (many minutes) would let the lease run out,
// and the other replicas abandon every review this live replica opens
// meanwhile.
func TestLeaseRenewedAfterItsConnectionVanished(t *testing.T) {
	postgresOnly(t, "leases are how replicas on one database own their waits")
	dir := stateDir(t)
	const lease = 600 * time.Millisecond
	front, s := openThroughFront(t, dir, lease)
	for range maxConns() { // the pool holds connections that will go silent
		if _, err := s.PendingIDs(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	db := rawDB(t, dir)
	front.freeze()
	var mark time.Time // the database's clock, three leases after the freeze
	if err := db.QueryRow("SELECT clock_timestamp() + make_interval(secs => $1)", 3*lease.Seconds()).Scan(&mark); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(lease / 6)
	defer tick.Stop()
	deadline := time.After(20 * lease)
	for {
		var expires time.Time
		if err := db.QueryRow("SELECT expires_at FROM leases WHERE id = $1", s.owner).Scan(&expires); err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		if expires.After(mark) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the lease was not renewed past %s in %s after its connections went silent (expires %s)", mark, 20*lease, expires)
		}
	}
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
	front, s := openThroughFront(t, dir, DefaultLease)
	quiet(t, s)
	if _, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-before", Server: "a", Stage: StageRequest,
		Outcome: "pass"}, Usage: Usage{Requests: 1}}); err != nil {
		t.Fatal(err)
	}

	front.silence()
	it := sampleItem("a")
	_, err := s.Commit(t.Context(), Entry{Decision: Decision{ID: "dc-silent", Server: "a", Stage: StageRequest,
		Outcome: "escalate"}, Usage: Usage{Requests: 1, RequestedTokens: 64, Tokens: 64}, Review: &it, ReviewTimeout: time.Hour})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("escalation while the server is silent: %v; want ErrUnavailable", err)
	}
	if n := front.starts.Load(); n != 1 {
		t.Errorf("the write began %d connections to the silent server; want one", n)
	}
}

// TestListenerReconnectsWhenItsConnectionVanishes: the listener's
// connection goes silent without closing (a failover, a dropped route).
// The listener must find out and listen again on a new connection, waking
// every waiter, instead of waiting on the dead one until the kernel gives
// up, many minutes during which no other replica's decision would wake
// this one's waiters.
func TestListenerReconnectsWhenItsConnectionVanishes(t *testing.T) {
	postgresOnly(t, "LISTEN/NOTIFY is PostgreSQL's")
	dir := stateDir(t)
	const lease = 600 * time.Millisecond
	front, s := openThroughFront(t, dir, lease)
	other := openStore(t, dir)
	first := s.Changed()
	it := mustAdd(t, other, sampleItem("a"), time.Hour)
	select {
	case <-first:
	case <-time.After(wakeDeadline):
		t.Fatal("the listener did not hear another replica's item")
	}

	front.freeze()
	changed := s.Changed()
	if _, err := other.Approve(t.Context(), it.ID, "alice", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(20 * lease):
		t.Fatalf("no wake-up in %s after the listener's connection went silent", 20*lease)
	}
}
