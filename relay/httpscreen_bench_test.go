package relay

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/zap"
)

// BenchmarkJSONAnswerRead: what reading one application/json answer of
// 12 MiB costs serve's heap, as the SDK reads it (handleJSON: the whole
// body, then its decoder), with the HTTP client unscreened ("sdk") and
// through screeningTransport, the body chunked or of a declared length.
// B/op is every byte allocated; peak-heap-MiB the most the heap held at
// once above what it held before, sampled while the collector runs after
// every 1% of growth (so the figure is about what is live, not garbage
// awaiting a collection); body-MiB the answer's size.
func BenchmarkJSONAnswerRead(b *testing.B) {
	const size = 12 << 20
	body := jsonAnswer(size)
	for _, declare := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if declare {
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			}
			_, _ = io.WriteString(w, body)
		}))
		defer srv.Close()
		transports := map[string]http.RoundTripper{
			"sdk":      http.DefaultTransport,
			"screened": &screeningTransport{base: http.DefaultTransport, server: "big", log: zap.NewNop()},
		}
		for _, name := range []string{"sdk", "screened"} {
			mode := map[bool]string{false: "chunked", true: "declared"}[declare]
			b.Run(name+"-"+mode, func(b *testing.B) {
				client := &http.Client{Transport: transports[name]}
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					peak = max(peak, peakHeap(b, func() { readAnswer(b, client, srv.URL) }))
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(len(body))/(1<<20), "body-MiB")
			})
		}
	}
}

// jsonAnswer is a tools/call result of size bytes, one text block.
func jsonAnswer(size int) string {
	head, tail := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`, `"}]}}`
	return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
}

// readAnswer posts a call to url and reads the answer as the SDK's
// streamable client reads a JSON one (streamableClientConn.handleJSON).
func readAnswer(b *testing.B, client *http.Client, url string) {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url,
		strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big"}}`))
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	msg, err := jsonrpc.DecodeMessage(raw)
	if r, ok := msg.(*jsonrpc.Response); err != nil || !ok || len(r.Result) < 12<<20-100 {
		b.Fatalf("decoded %T, %v", msg, err)
	}
}

// peakHeap runs f with the collector running after every 1% of heap
// growth, and returns the most the heap's objects took above where they
// were before f, sampled every 20µs.
func peakHeap(b *testing.B, f func()) uint64 {
	b.StopTimer()
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Microsecond):
			}
		}
	}()
	b.StartTimer()
	f()
	b.StopTimer()
	close(stop)
	<-done
	b.StartTimer()
	return peak.Load()
}
