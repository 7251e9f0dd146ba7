package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// InputOutcome is what the `sample_input` tool reports once every round is
// answered: the completions per round, and the requestState it got back on
// each retry, so a test can see its own state came back byte for byte.
type InputOutcome struct {
	Completions []json.RawMessage `json:"completions"`
	States      []string          `json:"states"`
}

// peerState is the requestState sample_input hands out: round n of a
// call, with characters a careless relay might alter.
func peerState(round int) string {
	return fmt.Sprintf("peer-state/%d/ü+=&\"<>", round)
}

// sampleInput asks for a completion the 2026-07-28 way: it answers with an
// input_required result holding params under the key "q", `rounds` times
// (default 1), then reports what it got. It never pushes.
func sampleInput(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Params json.RawMessage `json:"params"`
		Rounds int             `json:"rounds"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sample_input needs {params}"}
	}
	args.Rounds = max(args.Rounds, 1)
	var params mcp.CreateMessageWithToolsParams
	if err := json.Unmarshal(args.Params, &params); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params: " + err.Error()}
	}
	done, err := answered(req.Params)
	if err != nil {
		return nil, err
	}
	if len(done.Completions) < args.Rounds {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &params},
			RequestState: encodeProgress(done, len(done.Completions)+1)}, nil
	}
	text, _ := json.Marshal(done)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: done}, nil
}

// answered reads the rounds answered so far from the retry: the previous
// completions travel inside the requestState (after the peer's marker),
// the newest in inputResponses.
func answered(p *mcp.CallToolParamsRaw) (InputOutcome, error) {
	var out InputOutcome
	if p.RequestState == "" {
		// An answer on a first call is taken as it comes, as the Go SDK's
		// everything-server does: the state is only this peer's progress.
		if res, ok := p.InputResponses["q"]; ok {
			raw, _ := json.Marshal(res)
			out.Completions = append(out.Completions, raw)
		}
		return out, nil
	}
	marker, rest, ok := strings.Cut(p.RequestState, "\n")
	if !ok || json.Unmarshal([]byte(rest), &out) != nil {
		return out, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState is not the one sample_input gave"}
	}
	out.States = append(out.States, marker)
	res, ok := p.InputResponses["q"]
	if !ok {
		return out, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses has no answer for q"}
	}
	raw, _ := json.Marshal(res)
	out.Completions = append(out.Completions, raw)
	return out, nil
}

func encodeProgress(o InputOutcome, round int) string {
	b, _ := json.Marshal(o)
	return peerState(round) + "\n" + string(b)
}

// askAll asks, in one round, for an elicitation ("name"), the client's
// roots ("roots") and a completion ("q"), then reports the answers it got:
// a relay must pass the first two through unchanged.
func askAll(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params.RequestState == "" {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"name":  &mcp.ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
			"roots": &mcp.ListRootsParams{},
			"q": &mcp.CreateMessageWithToolsParams{MaxTokens: 10, Messages: []*mcp.SamplingMessageV2{
				{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}}},
		}, RequestState: "ask-all"}, nil
	}
	answers, _ := json.Marshal(req.Params.InputResponses)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(answers)}}}, nil
}

// shedPrefix marks the requestState of a load-shedding answer; the peer's
// transport makes such a result input_required with no input requests,
// which the SDK's server cannot express.
const shedPrefix = "peer-shed/"

// shed defers the call `times` times (load shedding: a bare requestState),
// then answers with how many retries it saw.
func shed(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Times int `json:"times"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &args)
	seen := 0
	if rest, ok := strings.CutPrefix(req.Params.RequestState, shedPrefix); ok {
		_, _ = fmt.Sscan(rest, &seen)
	}
	if seen < args.Times {
		return &mcp.CallToolResult{RequestState: fmt.Sprintf("%s%d", shedPrefix, seen+1)}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("retried %d times", seen)}}}, nil
}
