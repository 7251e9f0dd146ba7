package tracing

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestOTLPClient drives the client against collectors that decode what
// they get as any OTLP/HTTP collector would: the batch arrives whole with
// the configured headers, a busy collector is tried again, a refusal is
// not, and a redirect is not followed (the headers hold credentials).
func TestOTLPClient(t *testing.T) {
	spans := []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: "a"}, {Name: "b"}}}}}, {}}
	for _, tc := range []struct {
		name     string
		statuses []int // the collector's answers, in turn; the last repeats
		wantErr  bool
		wantPost int
	}{
		{"accepted", []int{200}, false, 1},
		{"busy, then accepted", []int{503, 429, 200}, false, 3},
		{"refused", []int{400}, true, 1},
		{"redirected", []int{307}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var posts, elsewhere atomic.Int32
			other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
			defer other.Close()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(posts.Add(1))
				if r.Header.Get("Authorization") != "Bearer x" || r.Header.Get("Content-Type") != "application/x-protobuf" {
					t.Errorf("headers %v", r.Header)
				}
				zr, err := gzip.NewReader(r.Body)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(zr)
				var req coltracepb.ExportTraceServiceRequest
				if err := proto.Unmarshal(raw, &req); err != nil || len(req.ResourceSpans) != 2 || len(req.ResourceSpans[0].ScopeSpans[0].Spans) != 2 {
					t.Errorf("collector decoded %v (%v)", &req, err)
				}
				status := tc.statuses[min(n, len(tc.statuses))-1]
				if status == 307 {
					http.Redirect(w, r, other.URL+"/v1/traces", status)
					return
				}
				w.WriteHeader(status)
			}))
			defer srv.Close()
			c := newOTLPClient(srv.URL+"/v1/traces", map[string]string{"Authorization": "Bearer x"})
			err := c.UploadTraces(context.Background(), spans)
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
			if int(posts.Load()) != tc.wantPost || elsewhere.Load() != 0 {
				t.Errorf("%d posts to the collector, %d elsewhere; want %d and 0", posts.Load(), elsewhere.Load(), tc.wantPost)
			}
		})
	}
}
