# Takes far longer than any timeout (10^10 iterations) and never decides.
package mcpxfw

decision := {"outcome": "permit", "deny": [], "review": []} if {
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i * j < 0
}
