package peer

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AskOutcome is what the `ask` and `ask_input` tools report: the client's
// answer to an elicitation or roots request as JSON, or the JSON-RPC error
// it was refused with.
type AskOutcome struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// askArgs is what `ask` and `ask_input` take: the method
// ("elicitation/create" or "roots/list") and its params, or for an
// elicitation the base64 of the params' exact bytes (raw_b64). With entry,
// ask_input sends raw_b64 as the whole input request entry, its member
// names as written (a hostile "METHOD" or "Params").
type askArgs struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Raw    string          `json:"raw_b64"`
	Entry  bool            `json:"entry"`
}

func (a *askArgs) read(req *mcp.CallToolRequest) error {
	if err := json.Unmarshal(req.Params.Arguments, a); err != nil || (a.Method != "elicitation/create" && a.Method != "roots/list") {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "ask needs {method: elicitation/create | roots/list, params}"}
	}
	if len(a.Params) == 0 {
		a.Params = json.RawMessage(`{}`)
	}
	return nil
}

// elicitation is the params to send: as given, or a stand-in whose
// _meta names the raw bytes the peer's transport swaps in on the way out.
func (a *askArgs) elicitation(r *rawParams) (*mcp.ElicitParams, error) {
	if a.Raw == "" {
		return elicitParams(a.Params)
	}
	raw, err := base64.StdEncoding.DecodeString(a.Raw)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "raw_b64: " + err.Error()}
	}
	token := r.put
	if a.Entry {
		token = r.putWhole
	}
	return &mcp.ElicitParams{Meta: mcp.Meta{rawKey: token(raw)}, Mode: "form", Message: "raw"}, nil
}

// elicitParams are the params of an elicitation, with the schema kept
// exactly as given.
func elicitParams(raw json.RawMessage) (*mcp.ElicitParams, error) {
	var p struct {
		mcp.ElicitParams
		Schema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params: " + err.Error()}
	}
	out := p.ElicitParams
	out.RequestedSchema = nil
	if len(p.Schema) > 0 {
		out.RequestedSchema = p.Schema
	}
	return &out, nil
}

// elicitSchemaKey carries the schema an `ask` sends, past the SDK's own
// check of the client's answer (see sendSchema).
type elicitSchemaKey struct{}

// ask pushes an elicitation or a roots request to the client, the way a
// server up to 2025-11-25 does, and reports the answer. ServerSession.Elicit
// checks the client's answer against the schema with the SDK's rules, which
// refuse valid SEP-1330 schemas; a server's check is not what the tests
// look at, so the schema travels beside the call and sendSchema puts it
// back on the wire.
func (r *rawParams) ask(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args askArgs
	if err := args.read(req); err != nil {
		return nil, err
	}
	var res any
	var err error
	if args.Method == "roots/list" {
		res, err = req.Session.ListRoots(ctx, &mcp.ListRootsParams{})
	} else {
		params, perr := args.elicitation(r)
		if perr != nil {
			return nil, perr
		}
		schema := params.RequestedSchema
		params.RequestedSchema = nil
		res, err = req.Session.Elicit(context.WithValue(ctx, elicitSchemaKey{}, schema), params)
	}
	return askResult(res, err), nil
}

// sendSchema is the upstream's sending middleware that completes ask.
func sendSchema(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if schema := ctx.Value(elicitSchemaKey{}); schema != nil && method == "elicitation/create" {
			// ServerSession's requests carry their params as mcp.Params.
			if r, ok := req.(*mcp.ServerRequest[mcp.Params]); ok {
				if ep, ok := r.Params.(*mcp.ElicitParams); ok {
					p := *ep
					p.RequestedSchema = schema
					r.Params = &p
				}
			}
		}
		return next(ctx, method, req)
	}
}

func askResult(res any, err error) *mcp.CallToolResult {
	var outcome AskOutcome
	if err != nil {
		outcome.Error = asError(err)
	} else {
		outcome.Result, _ = json.Marshal(res)
	}
	logLine("ask " + string(outcome.Result))
	text, _ := json.Marshal(outcome)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: outcome}
}

// askInput asks for an elicitation or the roots the 2026-07-28 way, as the
// input request "a", and on the retry reports the answer it got.
func (r *rawParams) askInput(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args askArgs
	if err := args.read(req); err != nil {
		return nil, err
	}
	// An answer it did not ask for is taken as well, as roots_input does: a
	// server that trusts whatever its client sends.
	if answer, ok := req.Params.InputResponses["a"]; ok {
		return askResult(answer, nil), nil
	}
	if req.Params.RequestState == "" {
		var in mcp.InputRequest = &mcp.ListRootsParams{}
		if args.Method == "elicitation/create" {
			params, err := args.elicitation(r)
			if err != nil {
				return nil, err
			}
			in = params
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"a": in}, RequestState: "ask-input"}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses has no answer for a"}
}
