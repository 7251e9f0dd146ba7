package pipeline

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// InOrderOf is in with the free-form JSON it holds (a form's
// requestedSchema, the input and output schemas of a sampling request's
// tools, its metadata) in the member order of sent, the request's params
// as their sender wrote them. The SDK decodes such values into maps, which
// encode with their members sorted: a host renders a form's fields in the
// order it gets them. Each value becomes the raw JSON it encodes to, in
// that order, so the bytes judged and the bytes forwarded stay one; only
// the order comes from sent (rawjson.InOrderOf), every name and value is
// in's. in itself is not changed.
func InOrderOf(in mcp.InputRequest, sent []byte) mcp.InputRequest {
	switch r := in.(type) {
	case *mcp.ElicitParams:
		out := *r
		out.RequestedSchema = ordered(r.RequestedSchema, rawjson.MemberValue(sent, "requestedSchema"))
		return &out
	case *mcp.CreateMessageWithToolsParams:
		out := *r
		out.Metadata = ordered(r.Metadata, rawjson.MemberValue(sent, "metadata"))
		out.Tools = toolsInOrderOf(r.Tools, rawjson.MemberValue(sent, "tools"))
		return &out
	}
	return in
}

// toolsInOrderOf is tools with their schemas in the member order of sent,
// the tools as written.
func toolsInOrderOf(tools []*mcp.Tool, sent []byte) []*mcp.Tool {
	if len(tools) == 0 {
		return tools
	}
	var refs [][]byte
	rawjson.EachElement(sent, func(e []byte) bool { refs = append(refs, e); return true })
	out := make([]*mcp.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
		if i < len(refs) {
			out[i] = ToolInOrderOf(t, refs[i])
		}
	}
	return out
}

// ToolInOrderOf is t with its input and output schemas in the member
// order of sent, the tool as written; t itself is not changed.
func ToolInOrderOf(t *mcp.Tool, sent []byte) *mcp.Tool {
	if t == nil || sent == nil {
		return t
	}
	c := *t
	c.InputSchema = ordered(t.InputSchema, rawjson.MemberValue(sent, "inputSchema"))
	c.OutputSchema = ordered(t.OutputSchema, rawjson.MemberValue(sent, "outputSchema"))
	return &c
}

// ordered is v encoded, in the member order of sent; nil stays nil (an
// omitted member stays omitted).
func ordered(v any, sent []byte) any {
	if v == nil || sent == nil {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return json.RawMessage(rawjson.InOrderOf(b, sent))
}
