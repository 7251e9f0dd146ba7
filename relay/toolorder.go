package relay

import (
	"bytes"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// keptTools bounds how many tools of one upstream listedTools keeps.
const keptTools = 4096

// listedTools keeps each tool an upstream listed, by name, as it wrote it
// (the newest listing of a name wins): the SDK decodes a tool's schemas
// into maps, which encode with their members sorted, and the host gets
// them back in the upstream's order (inOrder). Only the order is taken
// from here.
type listedTools struct {
	mu     sync.Mutex
	byName map[string][]byte
}

// note keeps the tools of a result that lists any.
func (l *listedTools) note(result []byte) {
	if l == nil || !bytes.Contains(result, []byte(`"tools"`)) {
		return
	}
	tools := rawjson.MemberValue(result, "tools")
	l.mu.Lock()
	defer l.mu.Unlock()
	rawjson.EachElement(tools, func(t []byte) bool {
		var name string
		if n := rawjson.MemberValue(t, "name"); rawjson.PlainString(n) {
			name = string(n[1 : len(n)-1])
		}
		if name == "" {
			return true
		}
		if l.byName == nil || len(l.byName) >= keptTools {
			l.byName = map[string][]byte{}
		}
		l.byName[name] = bytes.Clone(t)
		return true
	})
}

// inOrder is t, as the upstream listed it under name, with its schemas in
// the upstream's member order.
func (l *listedTools) inOrder(name string, t *mcp.Tool) *mcp.Tool {
	if l == nil || t == nil {
		return t
	}
	l.mu.Lock()
	sent := l.byName[name]
	l.mu.Unlock()
	return pipeline.ToolInOrderOf(t, sent)
}

// toolsInOrder is inOrder for each tool of an upstream's own listing.
func (l *listedTools) toolsInOrder(tools []*mcp.Tool) []*mcp.Tool {
	if tools == nil {
		return nil
	}
	out := make([]*mcp.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
		if t != nil {
			out[i] = l.inOrder(t.Name, t)
		}
	}
	return out
}
