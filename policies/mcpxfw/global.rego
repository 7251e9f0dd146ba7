# Package mcpxfw.global holds the rules every server is held to, whatever its
# own package says. Its deny rules apply at both stages: a request that breaks
# them never legitimately reaches the result stage, so re-checking is free.
package mcpxfw.global

# Context inclusion hands the upstream text from the host's other sessions
# and servers; mcpx-fw never advertises it, so asking for it is an attack or
# a bug.
deny contains {
	"code": "include-context",
	"message": $"includeContext {input.facts.include_context} is not allowed; only none is",
} if {
	input.facts.include_context != "none"
}

# The operator's per-server cap bounds what one request may cost.
deny contains {
	"code": "max-tokens",
	"message": $"maxTokens {input.facts.max_tokens} is above this server's cap of {cap}",
} if {
	cap := data.mcpxfw.config.servers[input.server.name].max_tokens
	input.facts.max_tokens > cap
}
