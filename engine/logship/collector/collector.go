// Package collector is a decision-log service for tests: a real HTTP
// server that takes what OPA's decision-log plugin uploads (POST of a
// gzip'd JSON array of events) and keeps it for the test to read. It is
// a peer, as a team's log collector would be, not a stand-in for
// anything mcpx-fw ships.
package collector

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Collector receives uploads at Path.
type Collector struct {
	URL  string // the service's base URL
	Path string // where it takes uploads: OPA's default /logs
	srv  *httptest.Server

	mu      sync.Mutex
	down    bool
	stall   chan struct{}     // while set, uploads wait until it is closed
	stalled int               // uploads that waited on a stall
	refused int               // uploads answered 503 while down
	events  []json.RawMessage // every event received, in order
	bodies  []byte            // every upload, decompressed, end to end
	headers []http.Header     // each accepted upload's headers
	bad     []string          // what was wrong with malformed uploads
}

// New starts a collector taking uploads at /logs.
func New() *Collector {
	c := &Collector{Path: "/logs"}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	c.URL = c.srv.URL
	return c
}

// Close stops the server, releasing uploads held by a stall first.
func (c *Collector) Close() {
	c.Release()
	c.srv.Close()
}

// Stall holds every upload unanswered until Release, as a collector that
// accepted the connection and hung would.
func (c *Collector) Stall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stall == nil {
		c.stall = make(chan struct{})
	}
}

// Release answers the uploads a stall held.
func (c *Collector) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stall != nil {
		close(c.stall)
		c.stall = nil
	}
}

// Stalled is how many uploads a stall held.
func (c *Collector) Stalled() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stalled
}

// SetDown makes the collector answer 503 to every upload (true) or take
// them again (false), as a collector being restarted would.
func (c *Collector) SetDown(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != c.Path {
		http.NotFound(w, r)
		return
	}
	c.mu.Lock()
	if stall := c.stall; stall != nil {
		c.stalled++
		c.mu.Unlock()
		<-stall
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if c.down {
		c.refused++
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	body, problem := readUpload(r)
	if problem != "" {
		c.bad = append(c.bad, problem)
		http.Error(w, problem, http.StatusBadRequest)
		return
	}
	var events []json.RawMessage
	if err := json.Unmarshal(body, &events); err != nil {
		c.bad = append(c.bad, "not a JSON array: "+err.Error())
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	c.events = append(c.events, events...)
	c.bodies = append(c.bodies, body...)
	c.headers = append(c.headers, r.Header.Clone())
}

// readUpload is the upload's body, gunzipped, or what is wrong with it.
func readUpload(r *http.Request) ([]byte, string) {
	if r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("Content-Type") != "application/json" {
		return nil, "want a gzip'd application/json body"
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		return nil, "not gzip: " + err.Error()
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return nil, "bad gzip: " + err.Error()
	}
	return body, ""
}

// Events are the events received so far, each as it was sent.
func (c *Collector) Events() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.events...)
}

// Received is how many events arrived.
func (c *Collector) Received() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// Bytes is every upload, decompressed, end to end: what left the process.
func (c *Collector) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.bodies)
}

// Refused is how many uploads were answered 503 while down.
func (c *Collector) Refused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// Headers are each accepted upload's request headers.
func (c *Collector) Headers() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]http.Header(nil), c.headers...)
}

// Malformed lists what was wrong with uploads it refused as malformed;
// OPA's plugin sends none.
func (c *Collector) Malformed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bad...)
}
