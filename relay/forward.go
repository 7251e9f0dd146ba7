package relay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// forwardMiddleware relays tools, prompts, resources and completions to the
// upstreams at the method level, so names, schemas, results and errors
// reach the host as the upstream sent them.
func (p *Proxy) forwardMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			return p.listTools(ctx, r)
		case *mcp.CallToolRequest:
			return p.callTool(ctx, r)
		case *mcp.ListPromptsRequest:
			return p.listPrompts(ctx, r)
		case *mcp.GetPromptRequest:
			return p.getPrompt(ctx, r)
		case *mcp.ListResourcesRequest:
			return p.listResources(ctx, r)
		case *mcp.ListResourceTemplatesRequest:
			return p.listResourceTemplates(ctx, r)
		case *mcp.ReadResourceRequest:
			return p.readResource(ctx, r)
		case *mcp.CompleteRequest:
			return p.complete(ctx, r)
		}
		return next(ctx, method, req)
	}
}

// nameSep joins a server name and a tool or prompt name when several
// upstreams share the host, so names from different servers cannot collide.
const nameSep = "__"

// exposed is the name the host sees for an upstream's tool or prompt.
func (p *Proxy) exposed(u *upstream, name string) string {
	if len(p.upstreamList()) == 1 {
		return name
	}
	return u.cfg.Name + nameSep + name
}

// route finds the upstream and its own name for a name the host used.
func (p *Proxy) route(name string) (*upstream, string, error) {
	ups := p.upstreamList()
	if len(ups) == 1 {
		return ups[0], name, nil
	}
	for _, u := range ups {
		if rest, ok := strings.CutPrefix(name, u.cfg.Name+nameSep); ok {
			return u, rest, nil
		}
	}
	return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown name %q", name)}
}

func (p *Proxy) callTool(ctx context.Context, r *mcp.CallToolRequest) (mcp.Result, error) {
	u, name, err := p.route(r.Params.Name)
	if err != nil {
		return nil, err
	}
	defer u.track(name)()
	res, err := u.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: r.Params.Arguments, Meta: scrubMeta(r.Params.Meta)})
	if err != nil {
		return nil, upstreamError(u, err)
	}
	return &mcp.CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError, Meta: scrubMeta(res.Meta)}, nil
}

func (p *Proxy) getPrompt(ctx context.Context, r *mcp.GetPromptRequest) (mcp.Result, error) {
	u, name, err := p.route(r.Params.Name)
	if err != nil {
		return nil, err
	}
	params := *r.Params
	params.Name, params.Meta = name, scrubMeta(r.Params.Meta)
	res, err := u.session.GetPrompt(ctx, &params)
	if err != nil {
		return nil, upstreamError(u, err)
	}
	return &mcp.GetPromptResult{Description: res.Description, Messages: res.Messages, Meta: scrubMeta(res.Meta)}, nil
}

// upstreamError relays an upstream's JSON-RPC error unchanged (code,
// message, data) and labels anything else, such as a dead process.
func upstreamError(u *upstream, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return internalError(fmt.Sprintf("upstream %s: %v", u.cfg.Name, err))
}

// scrubMeta drops protocol-owned _meta keys, which describe one hop only
// (protocol version, client or server info), and progress tokens, which
// are not yet remapped between the two sessions.
func scrubMeta(m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	out := mcp.Meta{}
	for k, v := range m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") || k == "progressToken" {
			continue
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
