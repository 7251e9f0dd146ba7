# Package mcpxfw.servers.main_test_sampler is a server package the
# composition's tests decide with, so they depend on no example server.
# Files ending _test.rego never decide a live request.
package mcpxfw.servers.main_test_sampler

import data.mcpxfw.lib

deny contains {"code": "no-tools", "message": "main_test_sampler may not offer tools to the model"} if {
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

permit if {
	lib.sampling
	lib.request_stage
	every kind in input.facts.block_types {
		kind == "text"
	}
}

permit if lib.result_stage

permit if {
	lib.request_stage
	not lib.sampling
}
