# Package mcpxfw.servers.everything decides for the MCP "everything"
# reference server. Its sampling tool sends one short text prompt and never
# needs tools, so that is what passes on its own; anything bigger waits for a
# person, and tools are refused outright.
package mcpxfw.servers.everything

import data.mcpxfw.lib

# Tools would let the model act for a test server; nothing it does needs them.
deny contains {
	"code": "no-tools",
	"message": "everything may not offer tools to the model",
} if {
	lib.sampling
	lib.request_stage
	input.facts.has_tools
}

review contains {
	"code": "long",
	"message": $"maxTokens {input.facts.max_tokens} is over this server's 1000",
} if {
	lib.sampling
	lib.request_stage
	input.facts.max_tokens > 1000
}

# Short text-only prompts are what the reference server sends.
permit if {
	lib.sampling
	lib.request_stage
	every kind in input.facts.block_types {
		kind == "text"
	}
	input.facts.text_bytes <= 4096
}

# Completions pass unless a review rule above holds them.
permit if lib.result_stage

# The reference server's forms and URL requests, and its roots requests,
# pass unless a global rule holds them (a form asking for a secret, a URL
# host not in allowed_hosts).
permit if {
	lib.request_stage
	not lib.sampling
}
