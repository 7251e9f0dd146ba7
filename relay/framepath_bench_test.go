package relay

import (
	"strings"
	"testing"
)

// BenchmarkFrameRewrite is what the frame path spends on one tools/call
// and its answer, in serve's own code: reading and rewriting each frame,
// and holding it to the framing rule as it is written (the pipes and the
// scheduler, which cost more, are P1's). "answer 64KiB" is an answer
// whose text the rule must scan whole.
func BenchmarkFrameRewrite(b *testing.B) {
	call := []byte(`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"},"_meta":{"progressToken":7,"io.modelcontextprotocol/clientInfo":{"name":"h"}}}}`)
	answer := []byte(`{"jsonrpc":"2.0","id":"mcpx-fw-c41","result":{"content":[{"type":"text","text":"ping"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}}}`)
	b.Run("call", func(b *testing.B) {
		b.SetBytes(int64(len(call)))
		for b.Loop() {
			e, ok := readEnvelope(call)
			req, ok2 := readToolCall(e.params)
			if !ok || !ok2 {
				b.Fatal("not read")
			}
			out, ok := toolCallFrame(&frameCall{id: "mcpx-fw-c41", name: "echo", token: "mcpx-fw-token"}, req)
			if !ok {
				b.Fatal("not rewritten")
			}
			if _, err := oneLine(out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("answer", func(b *testing.B) { benchAnswer(b, answer) })
	text := strings.Repeat("Über “quotes” — and lines\\n", 64<<10/30)
	b.Run("answer 64KiB", func(b *testing.B) {
		benchAnswer(b, []byte(`{"jsonrpc":"2.0","id":"mcpx-fw-c41","result":{"content":[{"type":"text","text":"`+text+`"}]}}`))
	})
}

// benchAnswer is the frame path's work on one answer.
func benchAnswer(b *testing.B, answer []byte) {
	b.SetBytes(int64(len(answer)))
	c := &frameCall{hostID: []byte("41")}
	for b.Loop() {
		e, ok := readEnvelope(answer)
		if !ok {
			b.Fatal("not read")
		}
		out, ok := c.reply(e)
		if !ok {
			b.Fatal("not rewritten")
		}
		if _, err := oneLine(out); err != nil {
			b.Fatal(err)
		}
	}
}
