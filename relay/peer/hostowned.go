package peer

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is one progress notification as the host received it.
type Progress struct {
	Token   any     `json:"token"`
	Message string  `json:"message"`
	Value   float64 `json:"progress"`
}

// progressSeen keeps every progress notification the host received.
type progressSeen struct {
	mu  sync.Mutex
	got []Progress
}

func (p *progressSeen) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, Progress{Token: req.Params.ProgressToken, Message: req.Params.Message, Value: req.Params.Progress})
}

// othersSeen counts the logging and resource-updated notifications the
// host received, which the firewall must not relay from anyone.
type othersSeen struct {
	mu  sync.Mutex
	got []string
}

func (o *othersSeen) add(method string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, method)
}

// OthersSeen lists the methods of the logging and resource-updated
// notifications the host received so far.
func (h *Host) OthersSeen() []string {
	h.others.mu.Lock()
	defer h.others.mu.Unlock()
	return append([]string{}, h.others.got...)
}

// ProgressSeen is every progress notification the host received so far.
func (h *Host) ProgressSeen() []Progress {
	h.progress.mu.Lock()
	defer h.progress.mu.Unlock()
	return append([]Progress{}, h.progress.got...)
}

// CallToolProgress calls a tool asking for progress under token.
func (h *Host) CallToolProgress(ctx context.Context, name string, args any, token any) (*ToolResult, error) {
	return h.callTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{"progressToken": token}})
}

// ReadResource reads uri and returns its text contents, joined; a
// JSON-RPC error comes back as *Error.
func (h *Host) ReadResource(ctx context.Context, uri string) (string, error) {
	res, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", asError(err)
	}
	text := ""
	for _, c := range res.Contents {
		text += c.Text
	}
	return text, nil
}

// ResourceURIs lists the URIs of the resources the host sees.
func (h *Host) ResourceURIs(ctx context.Context) ([]string, error) {
	res, err := h.session.ListResources(ctx, nil)
	if err != nil {
		return nil, asError(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	return uris, nil
}

// ResourceTemplates lists the resource templates the host sees.
func (h *Host) ResourceTemplates(ctx context.Context) ([]string, error) {
	res, err := h.session.ListResourceTemplates(ctx, nil)
	if err != nil {
		return nil, asError(err)
	}
	var out []string
	for _, t := range res.ResourceTemplates {
		out = append(out, t.URITemplate)
	}
	return out, nil
}

// CompletionRef is what a completion completes: a prompt (Type
// "ref/prompt", Name) or a resource or template (Type "ref/resource", URI).
type CompletionRef struct {
	Type, Name, URI string
}

// Complete asks for completions of argument (name, value) of ref.
func (h *Host) Complete(ctx context.Context, ref CompletionRef, name, value string) ([]string, error) {
	res, err := h.session.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: ref.Type, Name: ref.Name, URI: ref.URI},
		Argument: mcp.CompleteParamsArgument{Name: name, Value: value}})
	if err != nil {
		return nil, asError(err)
	}
	return res.Completion.Values, nil
}

// Received calls the `received` tool of a recording upstream (tool is its
// name as the host sees it) and returns what that upstream received.
func (h *Host) Received(ctx context.Context, tool string) ([]Received, error) {
	res, err := h.CallTool(ctx, tool, map[string]any{})
	if err != nil {
		return nil, err
	}
	var got []Received
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
		return nil, err
	}
	return got, nil
}
