package relay

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzToolResultReply: whenever the frame path rewrites an upstream's
// tools/call answer on its bytes, the host gets valid JSON and UTF-8, and
// exactly the result the full path builds from the same bytes
// (hostToolResult over the SDK's decoding) whenever the SDK can decode
// it. Content items pass as written once their types are known
// (plainContent): a field of the wrong kind in one (text a number, data
// not base64) is not the firewall's to refuse.
func FuzzToolResultReply(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"text","text":"plain"}]}`,
		`{"content":[{"type":"text","text":"x"}],"isError":true,"structuredContent":{"a":[1,2.5,"\u003cb\u003e"]},"_meta":{"vendor.example/kept":{"n":1}}}`,
		`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"},"progressToken":"t","k":1}}`,
		`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"resource","resource":{"uri":"a://b","text":"t"}}]}`,
		`{"content":[{"type":"text","TYPE":"bogus","text":"x"}]}`,
		`{"content":[1]}`,
		`{"content":[{"type":"tool_use","id":"1","name":"n","input":{}}]}`,
		`{"content":[],"structuredContent":null,"isError":false}`,
		`{"\u0063ontent":[]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, result []byte) {
		frame := append(append([]byte(`{"jsonrpc":"2.0","id":"mcpx-fw-c1","result":`), result...), '}')
		e, ok := readEnvelope(frame)
		if !ok {
			return
		}
		out, ok := (&frameCall{hostID: []byte("7")}).reply(e)
		if !ok {
			return
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("rewrote %q into invalid JSON or UTF-8: %q", result, out)
		}
		var sdk mcp.CallToolResult
		if err := json.Unmarshal(result, &sdk); err != nil {
			// Content items pass as written: their types are checked
			// (plainContent), the kinds of their fields are the host's to
			// read, as the upstream's text is.
			return
		}
		full, err := hostToolResult(hostView{era: "2025-11-25"}, &sdk)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := jsonrpc.DecodeMessage(out)
		if err != nil {
			t.Fatalf("rewrote %q into a frame the SDK cannot read: %v", result, err)
		}
		var got mcp.CallToolResult
		if err := json.Unmarshal(msg.(*jsonrpc.Response).Result, &got); err != nil {
			t.Fatalf("rewritten result unreadable: %v", err)
		}
		if diff := cmp.Diff(normalJSON(t, full), normalJSON(t, &got)); diff != "" {
			t.Fatalf("for %q the frame path differs from the full path (-full +frame):\n%s", result, diff)
		}
	})
}

// FuzzToolCallFrame: whenever the frame path relays a host's tools/call
// on its bytes, the upstream gets valid JSON with the host's name and
// arguments and the _meta the full path sends (upstreamMeta: the host's
// keys but the protocol's, and the firewall's progress token).
func FuzzToolCallFrame(f *testing.F) {
	for _, seed := range []string{
		`{"name":"echo","arguments":{"text":"hi"}}`,
		`{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":7,"io.modelcontextprotocol/clientInfo":{"name":"h"},"vendor/x":[1]}}`,
		`{"name":"echo","_meta":{}}`,
		`{"name":"e\u0063ho"}`,
		`{"name":"echo","arguments":null,"_meta":{"progressToken":"tok"}}`,
		`{"name":"echo","_meta":{"k":1,"k":2}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		frame := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`), params...), '}')
		e, ok := readEnvelope(frame)
		if !ok {
			return
		}
		req, ok := readToolCall(e.params)
		if !ok {
			return
		}
		c := &frameCall{id: "mcpx-fw-c1", name: string(req.name[1 : len(req.name)-1])}
		if req.token != nil {
			c.token = "mcpx-fw-token"
		}
		out, ok := toolCallFrame(c, req)
		if !ok {
			return
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("rewrote %q into invalid JSON or UTF-8: %q", params, out)
		}
		var host mcp.CallToolParamsRaw
		if err := json.Unmarshal(e.params, &host); err != nil {
			return // the SDK would refuse the host's call itself
		}
		want := &mcp.CallToolParamsRaw{Name: host.Name, Arguments: host.Arguments}
		if req.token != nil {
			want.Meta = upstreamMeta(&upstream{}, hostView{}, host.Meta, c.token)
		} else {
			want.Meta = upstreamMeta(&upstream{}, hostView{}, host.Meta, nil)
		}
		msg, err := jsonrpc.DecodeMessage(out)
		if err != nil {
			t.Fatalf("rewrote %q into a frame the SDK cannot read: %v", params, err)
		}
		var got mcp.CallToolParamsRaw
		if err := json.Unmarshal(msg.(*jsonrpc.Request).Params, &got); err != nil {
			t.Fatalf("rewritten params unreadable: %v", err)
		}
		if diff := cmp.Diff(normalJSON(t, want), normalJSON(t, &got)); diff != "" {
			t.Fatalf("for %q the frame path differs from the full path (-full +frame):\n%s", params, diff)
		}
	})
}

// normalJSON is v encoded and decoded again as plain JSON values, so two
// encodings of the same content compare equal.
func normalJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
