package validate

import (
	"path/filepath"
	"testing"
)

// BenchmarkRequest measures a typical tool-loop request, the common case
// on the sampling path.
func BenchmarkRequest(b *testing.B) {
	f := readFixture(b, filepath.Join("..", "testdata", "requests", "valid", "parallel-tool-use.json"), true)
	opt := f.options()[0]
	raw := f.params()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		Request(raw, opt)
	}
}

// BenchmarkRequestLarge measures a request near the default size limit,
// mostly one long text, to show parsing cost per byte.
func BenchmarkRequestLarge(b *testing.B) {
	text := make([]byte, 1<<20-64)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	raw := []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"` + string(text) + `"}}],"maxTokens":5}`)
	if _, vs := Request(raw, Options{Era: "2025-06-18"}); len(vs) != 0 {
		b.Fatal(vs)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		Request(raw, Options{Era: "2025-06-18"})
	}
}
