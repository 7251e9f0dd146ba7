package peer

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// declareInputs declares elicitation (form and url) when the host answers
// it, and roots when it has some.
func declareInputs(c *mcp.ClientCapabilities, opts HostOptions) {
	if opts.Elicit != nil {
		c.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	}
	if opts.Roots != nil {
		c.RootsV2 = &mcp.RootCapabilities{}
	}
}

// inputsMiddleware answers elicitation/create with opts.Elicit and
// roots/list with opts.Roots, before the SDK's client handles them: its
// own elicitation handling checks the schema with rules that refuse valid
// SEP-1330 schemas, which a host is not bound to. Each elicitation's params
// are sent on h.Elicited, as sampling's are on h.Asked.
func (h *Host) inputsMiddleware(opts HostOptions) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch {
			case method == "elicitation/create" && opts.Elicit != nil:
				return h.elicit(ctx, opts.Elicit, req.(*mcp.ElicitRequest).Params)
			case method == "roots/list" && opts.Roots != nil:
				res := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
				for _, uri := range opts.Roots {
					res.Roots = append(res.Roots, &mcp.Root{URI: uri})
				}
				return res, nil
			}
			return next(ctx, method, req)
		}
	}
}

func (h *Host) elicit(ctx context.Context, answer Answer, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	raw, _ := json.Marshal(params)
	select {
	case h.Elicited <- raw:
	default:
	}
	out, err := answer(ctx, raw)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, &jsonrpc.Error{Code: pe.Code, Message: pe.Message, Data: pe.Data}
		}
		return nil, err
	}
	var res mcp.ElicitResult
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
