package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// prose returns n bytes of plain English-like text.
func prose(n int) string {
	const words = "The quick brown fox jumps over the lazy dog while the model reads the request. "
	return strings.Repeat(words, n/len(words)+1)[:n]
}

// benchTool is a tool definition of realistic size.
func benchTool(i int) map[string]any {
	return map[string]any{
		"name":        fmt.Sprintf("tool_%d", i),
		"description": "Looks up the current state of a named record and returns it as JSON.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":  map[string]any{"type": "string", "description": "the record"},
				"limit": map[string]any{"type": "integer", "minimum": 1},
			},
			"required": []any{"name"},
		},
	}
}

// chatParams builds sampling params of n text messages of size bytes each,
// alternating user and assistant, one block a message. With tools > 0 it
// adds that many tool definitions and a system prompt of system bytes.
func chatParams(n, size, tools, system int) []byte {
	msgs := make([]any, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]any{"role": role, "content": map[string]any{"type": "text", "text": prose(size)}}
	}
	params := map[string]any{"messages": msgs, "maxTokens": 1000}
	if tools > 0 {
		list := make([]any, tools)
		for i := range list {
			list[i] = benchTool(i)
		}
		params["tools"] = list
		params["toolChoice"] = map[string]any{"mode": "auto"}
	}
	if system > 0 {
		params["systemPrompt"] = prose(system)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return raw
}

// benchCases are the request shapes of issue 3: a one-message request, a
// 10-message chat of 400 bytes a message, and 40 messages of 1 KB with 5
// tools and a 1.5 KB system prompt.
var benchCases = []struct {
	name string
	raw  []byte
	opt  Options
}{
	{"1msg", chatParams(1, 100, 0, 0), Options{Era: era20250618}},
	{"chat10x400", chatParams(10, 400, 0, 0), Options{Era: era20250618}},
	{"tools40x1k", chatParams(40, 1024, 5, 1536), Options{Era: era20251125, Caps: Capabilities{Tools: true}}},
}

func BenchmarkRequest(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			if _, vs := Request(bc.raw, bc.opt); len(vs) > 0 {
				b.Fatalf("benchmark input is invalid: %+v", vs)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.raw)))
			for b.Loop() {
				Request(bc.raw, bc.opt)
			}
		})
	}
}

// BenchmarkRequestLarge measures a request near the default text limit,
// mostly one long text, to show parsing cost per byte.
func BenchmarkRequestLarge(b *testing.B) {
	raw := chatParams(1, 1<<20-64, 0, 0)
	opt := Options{Era: era20250618}
	if _, vs := Request(raw, opt); len(vs) != 0 {
		b.Fatal(vs)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		Request(raw, opt)
	}
}

// BenchmarkResult measures a typical completion judged against the
// 10-message chat.
func BenchmarkResult(b *testing.B) {
	opt := Options{Era: era20250618}
	req, _ := Request(chatParams(10, 400, 0, 0), opt)
	raw := []byte(`{"role":"assistant","model":"claude-3-5-sonnet","stopReason":"endTurn","content":{"type":"text","text":"` + prose(400) + `"}}`)
	if _, vs := Result(raw, req, opt); len(vs) != 0 {
		b.Fatal(vs)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		Result(raw, req, opt)
	}
}

// benchForm is an elicitation form of n fields of every kind, with
// titles, descriptions, constraints and defaults, as a real upstream
// sends it.
func benchForm(n int) []byte {
	props := map[string]any{}
	for i := range n {
		var p map[string]any
		switch i % 5 {
		case 0:
			p = map[string]any{"type": "string", "format": "email", "maxLength": 120}
		case 1:
			p = map[string]any{"type": "integer", "minimum": 0, "maximum": 150, "default": 30}
		case 2:
			p = map[string]any{"type": "string", "oneOf": []any{
				map[string]any{"const": "s", "title": "Small"}, map[string]any{"const": "m", "title": "Medium"},
				map[string]any{"const": "l", "title": "Large"}}, "default": "m"}
		case 3:
			p = map[string]any{"type": "array", "maxItems": 3, "items": map[string]any{"type": "string", "enum": []any{"a", "b", "c", "d"}}}
		default:
			p = map[string]any{"type": "boolean", "default": false}
		}
		p["title"], p["description"] = fmt.Sprintf("Field %d", i), "What we need this for, in one sentence."
		props[fmt.Sprintf("field_%d", i)] = p
	}
	raw, err := json.Marshal(map[string]any{"mode": "form", "message": prose(200),
		"requestedSchema": map[string]any{"type": "object", "properties": props, "required": []any{"field_0"}}})
	if err != nil {
		panic(err)
	}
	return raw
}

// BenchmarkElicitation measures a form of 10 fields, a form of 100 (the
// default limit), and a URL-mode request.
func BenchmarkElicitation(b *testing.B) {
	opt := Options{Era: era20251125, Caps: Capabilities{Form: true, URL: true}}
	for _, bc := range []struct {
		name string
		raw  []byte
	}{
		{"form10", benchForm(10)},
		{"form100", benchForm(100)},
		{"url", []byte(`{"mode":"url","message":"Connect your account","url":"https://auth.example.com/oauth/start?client=abc&state=xyz","elicitationId":"4f1c2e"}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if _, vs := Elicitation(bc.raw, opt); len(vs) > 0 {
				b.Fatalf("benchmark input is invalid: %+v", vs)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.raw)))
			for b.Loop() {
				Elicitation(bc.raw, opt)
			}
		})
	}
}

// BenchmarkElicitationResult measures the answer to the 10-field form.
func BenchmarkElicitationResult(b *testing.B) {
	opt := Options{Era: era20251125}
	req, _ := Elicitation(benchForm(10), opt)
	content := map[string]any{}
	for i := range 10 {
		name := fmt.Sprintf("field_%d", i)
		content[name] = []any{"ada@example.com", 36, "l", []any{"a", "c"}, true}[i%5]
	}
	raw, _ := json.Marshal(map[string]any{"action": "accept", "content": content})
	if _, vs := ElicitationResult(raw, req, opt); len(vs) > 0 {
		b.Fatal(vs)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		ElicitationResult(raw, req, opt)
	}
}

// TestAllocsGrowLinearly checks that allocations per request grow about
// linearly with the number of messages: quadruple the messages, at most
// five times the allocations (a quadratic cost would give sixteen).
func TestAllocsGrowLinearly(t *testing.T) {
	opt := Options{Era: era20250618}
	allocs := map[int]float64{}
	for _, n := range []int{10, 20, 40} {
		raw := chatParams(n, 400, 0, 0)
		if _, vs := Request(raw, opt); len(vs) > 0 {
			t.Fatalf("%d messages: %+v", n, vs)
		}
		allocs[n] = testing.AllocsPerRun(20, func() { Request(raw, opt) })
	}
	ratio := allocs[40] / allocs[10]
	t.Logf("allocs/op: 10 msgs %.0f, 20 msgs %.0f, 40 msgs %.0f; 40/10 = %.2f", allocs[10], allocs[20], allocs[40], ratio)
	if ratio > 5 {
		t.Errorf("allocations grow faster than linearly: 40/10 messages = %.2f, want <= 5", ratio)
	}
}
