package validate_test

import (
	"fmt"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// A tool result that answers no tool use is refused with the spec's own
// phrase as the wire message; the rule id and path go to the decision log.
func ExampleRequest() {
	params := []byte(`{
		"messages": [
			{"role": "user", "content": {"type": "text", "text": "What is the weather?"}},
			{"role": "user", "content": [{"type": "tool_result", "toolUseId": "call_1", "content": []}]}
		],
		"maxTokens": 100
	}`)
	_, violations := validate.Request(params, validate.Options{Era: "2025-11-25"})
	for _, v := range violations {
		fmt.Println(v.Rule, v.Path)
	}
	fmt.Println(validate.Title(violations[0].Rule))
	// Output:
	// SMP-06.pairing /messages/1/content/0/toolUseId
	// Tool result missing in request
}

// A completion is judged against the request it answers: here the request
// offered no tools, so the host's tool call may not go back upstream.
func ExampleResult() {
	request, _ := validate.Request([]byte(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":50}`),
		validate.Options{Era: "2025-11-25"})
	result := []byte(`{"role":"assistant","model":"m","stopReason":"toolUse",
		"content":{"type":"tool_use","id":"t1","name":"shell","input":{"cmd":"id"}}}`)
	_, violations := validate.Result(result, request, validate.Options{Era: "2025-11-25"})
	for _, v := range violations {
		fmt.Println(v.Rule, v.Path, v.Message)
	}
	// Output:
	// RES-03.tool-use /content the request offered no tools
}
