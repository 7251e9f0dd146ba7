package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/review/pgtest"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// The replica tests run several `serve --http` on one PostgreSQL store,
// behind a balancer written here: the package's one throwaway cluster
// (started by the first test that needs it, stopped by TestMain), a
// database of its own per test, and a front that round-robins requests
// and keeps Mcp-Session-Id affinity, as the README asks of a balancer.

// testPG is the package's cluster.
var testPG struct {
	once sync.Once
	c    *pgtest.Cluster
	err  error
	dbs  atomic.Int64 // databases made so far, for their names
}

// sharedCluster starts the package's cluster on first use. Without
// PostgreSQL the test skips, or fails where CI is set.
func sharedCluster(t testing.TB) *pgtest.Cluster {
	t.Helper()
	if _, err := pgtest.BinDir(); err != nil {
		pgtest.Skip(t, err)
	}
	testPG.once.Do(func() { testPG.c, testPG.err = pgtest.Start() })
	if testPG.err != nil {
		t.Fatalf("start PostgreSQL: %v", testPG.err)
	}
	return testPG.c
}

// stopSharedCluster stops the package's cluster, if a test started it.
func stopSharedCluster() {
	if testPG.c == nil {
		return
	}
	if err := testPG.c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop PostgreSQL: %v\n", err)
	}
}

// newDatabase creates a database of its own for a test on the package's
// cluster and returns its URL.
func newDatabase(t testing.TB) string {
	t.Helper()
	c := sharedCluster(t)
	name := fmt.Sprintf("replicas_%d", testPG.dbs.Add(1))
	if err := c.CreateDatabase(name); err != nil {
		t.Fatal(err)
	}
	return c.URL(name)
}

// openURLStore opens the shared store as another process would.
func openURLStore(t testing.TB, storeURL string) *review.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := review.OpenURL(ctx, storeURL, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// replica is one running `serve --http` of the set.
type replica struct {
	*httpServe
	index int
	cfg   string // its config: its own state dir and logs, the shared store
	dir   string
}

// replicaServers is the servers: section of every replica: two load
// upstreams (the tools are then named load0__…, load1__…).
func replicaServers() string {
	var b strings.Builder
	for i := range 2 {
		b.WriteString(peerServer(fmt.Sprintf("load%d", i), 1000))
		fmt.Fprintf(&b, "    env: {%s: \"1\"}\n", peer.LoadEnv)
	}
	return b.String()
}

// startReplicas starts n replicas on storeURL, each with its own config
// (the same policies and servers, extra appended) and state dir, the
// decision log's content on.
func startReplicas(t *testing.T, n int, storeURL string, reviewTimeout time.Duration, extra string) []*replica {
	t.Helper()
	return startReplicasOf(t, n, storeURL, reviewTimeout, replicaServers(), "", extra)
}

// startReplicasOf is startReplicas with servers as the servers: section
// and limits (lines of the limits: section) added to the unlimited ones.
func startReplicasOf(t *testing.T, n int, storeURL string, reviewTimeout time.Duration, servers, limits, extra string) []*replica {
	t.Helper()
	rs := make([]*replica, n)
	for i := range n {
		cfg := testConfig(t, repoPath(t, "policies"), reviewTimeout, servers)
		appendConfig(t, cfg, unlimited+limits+fmt.Sprintf("store:\n  url: %q\n", storeURL)+extra)
		logContent(t, cfg)
		rs[i] = &replica{index: i, cfg: cfg, dir: filepath.Dir(cfg)}
	}
	// They start together, as a rollout does: the first migrates the
	// schema under the store's lock, the others wait for it.
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() { r.httpServe = startHTTPServe(t, r.cfg) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return rs
}

// front is the balancer: each request that names a session goes to the
// replica that created it; every other request goes to the next live
// replica in turn.
type front struct {
	srv      *httptest.Server
	backends []*httputil.ReverseProxy
	next     atomic.Uint64
	mu       sync.Mutex
	sessions map[string]int // Mcp-Session-Id -> replica
	down     []bool         // replicas taken out of the rotation
	routed   []atomic.Int64 // requests sent to each replica
	// handed is the replica that handed out each 2026-07-28 requestState;
	// resumedSame and resumedElsewhere count the retries that carried one
	// back to that replica and to another.
	handed                        map[string]int
	resumedSame, resumedElsewhere atomic.Int64
	// elsewhere sends every retry that carries a requestState to a live
	// replica other than the one that handed the state out.
	elsewhere bool
}

// statePattern finds the requestState values in a 2026-07-28 message.
var statePattern = regexp.MustCompile(`"requestState":"((?:[^"\\]|\\.)*)"`)

// newFront starts a front for the replicas.
func newFront(t *testing.T, rs []*replica) *front {
	t.Helper()
	f := &front{sessions: map[string]int{}, down: make([]bool, len(rs)), routed: make([]atomic.Int64, len(rs)), handed: map[string]int{}}
	transport := &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}
	t.Cleanup(transport.CloseIdleConnections)
	for i, r := range rs {
		target, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		f.backends = append(f.backends, &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.URL.Path = target.Path // the replica's endpoint, whatever path the host used
			},
			Transport:     transport,
			FlushInterval: -1, // event streams pass as they are written
			ModifyResponse: func(res *http.Response) error {
				if sid := res.Header.Get("Mcp-Session-Id"); sid != "" && res.Request.Header.Get("Mcp-Session-Id") == "" {
					f.mu.Lock()
					f.sessions[sid] = i
					f.mu.Unlock()
				}
				if modernRequest(res.Request.Header) {
					return f.noteHanded(res, i)
				}
				return nil
			},
			ErrorLog: log.New(io.Discard, "", 0), // a replica killed on purpose
		})
	}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

// URL is where hosts connect.
func (f *front) URL() string { return f.srv.URL + "/mcp" }

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	from := -1 // the replica that handed out the state a retry carries
	if modernRequest(r.Header) && r.Body != nil {
		var err error
		if from, err = f.handedFrom(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	}
	avoid := -1
	if f.elsewhere {
		avoid = from
	}
	i := f.route(r.Header.Get("Mcp-Session-Id"), avoid)
	f.routed[i].Add(1)
	switch {
	case from < 0:
	case from == i:
		f.resumedSame.Add(1)
	default:
		f.resumedElsewhere.Add(1)
	}
	// Full duplex: a replica answers as soon as it has the body (an event
	// stream's headers at once), maybe before the proxy's transport has
	// read the body's end; by default the HTTP/1 server then discards and
	// closes the rest of the body at the first write, the transport's
	// next read of it fails, and it closes the connection under the answer
	// being streamed: the host's call ends without a response.
	_ = http.NewResponseController(w).EnableFullDuplex()
	f.backends[i].ServeHTTP(w, r)
}

// modernRequest reports a request of a 2026-07-28 (or later) host, as
// serve routes them.
func modernRequest(h http.Header) bool { return h.Get("MCP-Protocol-Version") >= "2026-07-28" }

// noteHanded reads a 2026-07-28 response whole (a stateless call's
// stream ends with its answer) and notes the replica that handed out each
// requestState in it.
func (f *front) noteHanded(res *http.Response, i int) error {
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range statePattern.FindAllSubmatch(b, -1) {
		f.handed[string(m[1])] = i
	}
	return err
}

// handedFrom reads a 2026-07-28 request whole and returns the replica
// that handed out the requestState it carries back, or -1.
func (f *front) handedFrom(r *http.Request) (int, error) {
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	m := statePattern.FindSubmatch(b)
	if m == nil {
		return -1, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	from, ok := f.handed[string(m[1])]
	if !ok {
		return -1, err
	}
	return from, err
}

// route picks the replica for a request: the session's, or else the next
// live one other than avoid (-1: any). A session the front does not know
// (its replica's reply was lost) goes round, and that replica answers for
// it.
func (f *front) route(sid string, avoid int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := f.sessions[sid]; ok && sid != "" {
		return i
	}
	for {
		i := int(f.next.Add(1)-1) % len(f.backends)
		if !f.down[i] && i != avoid {
			return i
		}
	}
}

// remove takes replica i out of the rotation, as a balancer's health check
// does once it stops answering; its sessions still go to it.
func (f *front) remove(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down[i] = true
}

// sessionReplicas is a copy of the front's sessions: id -> replica.
func (f *front) sessionReplicas() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.sessions)
}

// sessionsOn counts the sessions created on each replica.
func (f *front) sessionsOn() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := make([]int, len(f.backends))
	for _, i := range f.sessions {
		n[i]++
	}
	return n
}

// routedCounts is how many requests went to each replica.
func (f *front) routedCounts() []int64 {
	out := make([]int64, len(f.routed))
	for i := range f.routed {
		out[i] = f.routed[i].Load()
	}
	return out
}
