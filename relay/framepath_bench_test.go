package relay

import "testing"

// BenchmarkFrameRewrite is what the frame path spends on one tools/call
// and its answer, in serve's own code: reading and rewriting each frame
// (the pipes and the scheduler, which cost more, are P1's).
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
			if _, ok := toolCallFrame(&fastCall{id: "mcpx-fw-c41", name: "echo", token: "mcpx-fw-token"}, req); !ok {
				b.Fatal("not rewritten")
			}
		}
	})
	b.Run("answer", func(b *testing.B) {
		b.SetBytes(int64(len(answer)))
		c := &fastCall{hostID: []byte("41")}
		for b.Loop() {
			e, ok := readEnvelope(answer)
			if !ok {
				b.Fatal("not read")
			}
			if _, ok := c.reply(e); !ok {
				b.Fatal("not rewritten")
			}
		}
	})
}
