package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// benchChat is the 10-message chat of issue 3: 400 bytes of text a
// message, alternating user and assistant, one block a message (the same
// shape as validate's BenchmarkRequest/chat10x400).
func benchChat(b *testing.B) []byte {
	b.Helper()
	const words = "The quick brown fox jumps over the lazy dog while the model reads the request. "
	text := strings.Repeat(words, 400/len(words)+1)[:400]
	msgs := make([]any, 10)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]any{"role": role, "content": map[string]any{"type": "text", "text": text}}
	}
	raw, err := json.Marshal(map[string]any{"messages": msgs, "maxTokens": 1000})
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkValidateVsPolicy measures, in one run and on the same request,
// the structural validation of the 10×400-byte chat and the shipped
// policy's evaluation of it (input built by buildInput, as the engine
// does, then Evaluate). Each iteration does both, so they share the same
// machine conditions. Reported: validate-ns/op, policy-ns/op (buildInput
// plus Evaluate) and their ratio validate/policy; issue 3's target is a
// ratio below 0.15. ns/op, B/op and allocs/op are for the two together.
func BenchmarkValidateVsPolicy(b *testing.B) {
	p, err := LoadPolicy(b.Context(), PolicyConfig{Dir: shippedPolicies, Data: shippedConfig})
	if err != nil {
		b.Fatal(err)
	}
	s := Request{
		Server: Server{Name: "everything", Label: "Everything reference server", Era: "2025-06-18"},
		Host:   Host{Era: "2025-06-18", Capabilities: map[string]any{"sampling": map[string]any{}}},
		Origin: Origin{Method: "tools/call", Name: "test_sampling"},
		Params: benchChat(b),
	}
	opt := validate.Options{Era: s.Server.Era, Caps: s.Caps}
	req, vs := validate.Request(s.Params, opt)
	if len(vs) > 0 {
		b.Fatalf("benchmark request is invalid: %+v", vs)
	}
	d, err := p.Evaluate(b.Context(), buildInput(StageRequest, s, req, nil, nil, Usage{}))
	if err != nil {
		b.Fatalf("policy: %v", err)
	}
	b.Logf("policy outcome on the benchmark request: %s", d.Outcome)

	ctx := b.Context()
	b.ReportAllocs()
	b.SetBytes(int64(len(s.Params)))
	var inValidate, inPolicy time.Duration
	for b.Loop() {
		t0 := time.Now()
		doc, _ := validate.Request(s.Params, opt)
		t1 := time.Now()
		if _, err := p.Evaluate(ctx, buildInput(StageRequest, s, doc, nil, nil, Usage{})); err != nil {
			b.Fatal(err)
		}
		inValidate += t1.Sub(t0)
		inPolicy += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(inValidate.Nanoseconds())/n, "validate-ns/op")
	b.ReportMetric(float64(inPolicy.Nanoseconds())/n, "policy-ns/op")
	b.ReportMetric(float64(inValidate)/float64(inPolicy), "validate/policy")
}
