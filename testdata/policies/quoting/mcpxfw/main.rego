# A policy whose words quote what the upstream and the host wrote: its
# review reason names the system prompt and the tool, and at the result
# stage a builtin fails on the model's name (strict builtin errors make
# that an evaluation error whose message quotes it). A masked decision log
# must show neither.
package mcpxfw

decision := {
	"outcome": "review",
	"deny": [],
	"review": [{
		"code": "quoted",
		"message": $"the system prompt says {object.get(input.request, "systemPrompt", "")} and offers {concat(", ", input.facts.tool_names)}",
	}],
} if input.stage == "request"

decision := {"outcome": "permit", "deny": [], "review": []} if {
	input.stage == "result"
	to_number(input.result.model) > 0
}
