package policybundle

import (
	"bytes"
	"compress/gzip"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestBoundedClientKeepsCredentials: the bounded transport sits under
// OPA's own auth plugin, so the bearer token and the configured headers
// still go with every request, and a response past the whole-bundle bound
// (a gzip bomb here, small on the wire) fails the download as an HTTP
// error does, before OPA reads a byte of it.
func TestBoundedClientKeepsCredentials(t *testing.T) {
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write(make([]byte, 4<<20))
	_ = zw.Close()
	var mu sync.Mutex
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		_, _ = w.Write(bomb.Bytes())
	}))
	defer srv.Close()
	s, err := New(Config{URL: srv.URL, BearerToken: "tok", Headers: map[string]string{"X-Team": "a"},
		SizeLimitBytes: 1 << 20, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	u := s.Fetch(t.Context())
	if !errors.Is(u.Err, errTooLarge) || u.Failure != FailDownload || u.Bundle != nil || u.Raw != nil {
		t.Errorf("a %d-byte gzip of 4 MiB under a 1 MiB bound: %+v", bomb.Len(), u)
	}
	mu.Lock()
	defer mu.Unlock()
	if got.Get("Authorization") != "Bearer tok" || got.Get("X-Team") != "a" {
		t.Errorf("the service got Authorization %q, X-Team %q", got.Get("Authorization"), got.Get("X-Team"))
	}
}
