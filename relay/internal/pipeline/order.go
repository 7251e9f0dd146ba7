package pipeline

import (
	"context"
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

// EditOrder is the member order an operator's edit of a request crosses
// in, given sent, the request's params as their sender wrote them: sent's
// order for every member the SDK's types hold (a sampling request's
// messages and their content among them), which the edit document cannot
// keep, but none for the free-form values InOrderOf orders, which keep the
// edit's own order (an operator may reorder a form's fields).
func EditOrder(sent []byte) []byte {
	return withValues(sent, func(name string, v []byte) []byte {
		switch name {
		case "requestedSchema", "metadata":
			return []byte("null")
		case "tools":
			return withElements(v, func(t []byte) []byte { return withValues(t, schemasLeft) })
		}
		return v
	})
}

// schemasLeft leaves out a tool's schemas from an order (EditOrder).
func schemasLeft(name string, v []byte) []byte {
	if name == "inputSchema" || name == "outputSchema" {
		return []byte("null")
	}
	return v
}

// withValues is the object raw with each member's value replaced by fn's;
// anything else is raw.
func withValues(raw []byte, fn func(name string, v []byte) []byte) []byte {
	if !rawjson.IsObject(raw) {
		return raw
	}
	out := []byte{'{'}
	for i, m := range rawjson.Members(raw) {
		if i > 0 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(m.Key)
		out = append(append(append(out, name...), ':'), fn(m.Key, m.Value)...)
	}
	return append(out, '}')
}

// withElements is the array raw with each element replaced by fn's.
func withElements(raw []byte, fn func(e []byte) []byte) []byte {
	out := []byte{'['}
	rawjson.EachElement(raw, func(e []byte) bool {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, fn(e)...)
		return true
	})
	return append(out, ']')
}

// uneditedKey carries, in the context a request is asked of the host
// in, the request when it is the upstream's own, no operator's edit
// (Unedited).
type uneditedKey struct{}

// unedited is a request as cleared, and the bytes the engine judged of it.
type unedited struct {
	params mcp.InputRequest
	judged []byte
}

// Unedited reports whether the request the pipeline asks of the host in
// ctx is the one its upstream sent, as decoded, no operator's edit: it
// then crosses in its sender's member order whole, and the relay need not
// look for which request it is.
func Unedited(ctx context.Context) bool {
	_, ok := ctx.Value(uneditedKey{}).(unedited)
	return ok
}

// Judged is the encoding the engine judged of params, the request asked
// of the host in ctx, when params is that very request, unedited and
// unchanged since (no _meta added on its way): the host is sent the bytes
// judged, and params is not encoded a second time. Nil otherwise.
func Judged(ctx context.Context, params mcp.Params) []byte {
	u, ok := ctx.Value(uneditedKey{}).(unedited)
	if !ok || any(params) != any(u.params) || params.GetMeta() != nil {
		return nil
	}
	return u.judged
}

// KeepUnedited is to with from's Unedited mark, for a context the relay
// makes anew to ask the host in.
func KeepUnedited(to, from context.Context) context.Context {
	u, ok := from.Value(uneditedKey{}).(unedited)
	if !ok {
		return to
	}
	return context.WithValue(to, uneditedKey{}, u)
}
