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

// A form may ask only for flat primitive fields; a nested object is
// refused, and the first violation's title goes on the wire.
func ExampleElicitation() {
	params := []byte(`{
		"message": "Where should we ship it?",
		"requestedSchema": {
			"type": "object",
			"properties": {
				"name": {"type": "string", "minLength": 1},
				"address": {"type": "object", "properties": {"street": {"type": "string"}}}
			},
			"required": ["name"]
		}
	}`)
	_, violations := validate.Elicitation(params, validate.Options{Era: "2025-11-25"})
	for _, v := range violations {
		fmt.Println(v.Rule, v.Path)
	}
	fmt.Println(validate.Title(violations[0].Rule))
	// Output:
	// ELI-05.field /requestedSchema/properties/address/type
	// Form field must be a flat primitive
}

// The host's answer is checked against the form it answers; the
// violations name the field and the rule, never what the user typed.
func ExampleElicitationResult() {
	opt := validate.Options{Era: "2025-11-25"}
	request, _ := validate.Elicitation([]byte(`{"message":"Contact?","requestedSchema":{"type":"object",
		"properties":{"email":{"type":"string","format":"email"},"age":{"type":"integer","minimum":18}},
		"required":["email"]}}`), opt)
	result := []byte(`{"action":"accept","content":{"email":"not-an-address","age":17.5,"note":"hi"}}`)
	_, violations := validate.ElicitationResult(result, request, opt)
	for _, v := range violations {
		fmt.Println(v.Rule, v.Path, v.Message)
	}
	// Output:
	// ELI-25.constraint /content/email the value is not a valid email
	// ELI-24.type /content/age the value must be an integer
	// ELI-22.unknown-field /content/note the form has no such field
}

// Roots must be absolute file:// URIs, each listed once.
func ExampleRootsResult() {
	result := []byte(`{"roots":[{"uri":"file:///home/ada/src","name":"src"},{"uri":"https://example.com/"},{"uri":"file:///home/ada/src"}]}`)
	_, violations := validate.RootsResult(result, nil, validate.Options{Era: "2025-06-18"})
	for _, v := range violations {
		fmt.Println(v.Rule, v.Path, v.Message)
	}
	// Output:
	// RTS-05.uri /roots/1/uri uri must start with file://
	// RTS-07.duplicate /roots/2/uri this URI is listed twice
}
