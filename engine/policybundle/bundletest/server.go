package bundletest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Resource is where Server serves its bundle, OPA's default resource.
const Resource = "/bundles/bundle.tar.gz"

// Server is a bundle service as OPA expects one: GET Resource answers the
// current bundle with an ETag, 304 when If-None-Match names it, or the
// status set by Fail.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	body     []byte
	etag     string
	status   int // non-zero: every request answers this
	requests int
	changed  chan struct{} // closed and replaced by Serve
	// LongPoll makes the service offer long polling as OPA's protocol has
	// it: bundles go out with OPA's content type, and a request naming the
	// current ETag with "Prefer: wait=N" is held until Serve changes the
	// bundle or N seconds pass.
	LongPoll bool
}

// NewServer starts a service serving body; it closes with the test.
func NewServer(t testing.TB, body []byte) *Server {
	s := &Server{}
	s.Serve(body)
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// Serve makes body the bundle served from now on, and clears Fail.
func (s *Server) Serve(body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := sha256.Sum256(body)
	s.body, s.etag, s.status = body, `"`+hex.EncodeToString(sum[:8])+`"`, 0
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
}

// Fail makes every request answer status (503, 404, ...).
func (s *Server) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// Requests counts the requests served so far.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body, etag, status, changed, long := s.body, s.etag, s.status, s.changed, s.LongPoll
	s.requests++
	s.mu.Unlock()
	if wait := preferWait(r); long && wait > 0 && status == 0 && r.Header.Get("If-None-Match") == etag {
		select {
		case <-changed:
			s.handle(w, r) // answer with what changed
			return
		case <-time.After(wait):
		case <-r.Context().Done():
		}
	}
	if long {
		w.Header().Set("Content-Type", "application/vnd.openpolicyagent.bundles")
	}
	switch {
	case status != 0:
		http.Error(w, http.StatusText(status), status)
	case r.URL.Path != Resource:
		http.NotFound(w, r)
	case r.Header.Get("If-None-Match") == etag:
		w.WriteHeader(http.StatusNotModified)
	default:
		w.Header().Set("ETag", etag)
		if !long {
			w.Header().Set("Content-Type", "application/gzip")
		}
		_, _ = w.Write(body)
	}
}

// preferWait is the "wait=N" of a request's Prefer header, 0 without one.
func preferWait(r *http.Request) time.Duration {
	for part := range strings.SplitSeq(r.Header.Get("Prefer"), ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "wait="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return time.Duration(n) * time.Second
			}
		}
	}
	return 0
}
