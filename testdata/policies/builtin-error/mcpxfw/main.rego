# A builtin fails at evaluation (to_number of a word). mcpx-fw evaluates with
# strict builtin errors, so the failure is an error, not a rule that quietly
# does not fire.
package mcpxfw

decision := {"outcome": "permit", "deny": [], "review": []} if {
	to_number(input.stage) > 0
}
