# Package mcpxfw.global holds the rules every server is held to, whatever its
# own package says. Its deny rules apply at both stages: a request that breaks
# them never legitimately reaches the result stage, so re-checking is free.
package mcpxfw.global

import data.mcpxfw.lib

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

# A server with an hourly token budget may not start a request that could
# take it past the budget: tokens already charged this hour (completions at
# what they returned, requests still in flight at their maxTokens) plus this
# request's maxTokens. Request stage only: a completion was paid for when
# its request passed, and withholding it saves nothing.
deny contains {
	"code": "budget-exhausted",
	"message": $"server {input.server.name} has used {input.usage.hour.tokens} of its {limit} tokens this hour; this request may take {input.facts.max_tokens} more",
} if {
	lib.request_stage
	limit := budget.hourly_tokens
	input.usage.hour.tokens + input.facts.max_tokens > limit
}

# A budget that cannot be checked is not a budget: without the usage
# mcpx-fw always supplies, refuse rather than let the request through.
deny contains {
	"code": "usage-missing",
	"message": $"server {input.server.name} has a budget but the input carries no usage for the {window} window",
} if {
	lib.request_stage
	some key, _ in budget
	window := budget_windows[key]
	not usage_window(window)
}

# budget_windows names the usage window each budget key is measured in.
budget_windows := {"hourly_tokens": "hour", "burst_per_minute": "minute"}

# usage_window is true when input.usage reports the window.
usage_window(window) if is_object(input.usage[window])

# Unicode tag characters render as nothing, yet models read them as the
# ASCII they shadow: a way to hand the model instructions no person sees.
# mcpx-fw decodes them into facts.hidden_text (emoji flags, which are made
# of them legitimately, excepted); only their number goes in the reason,
# so the reason itself hides nothing and leaks nothing.
review contains {
	"code": "hidden-text",
	"message": $"the prompt carries {count(input.facts.hidden_text)} characters of invisible text (Unicode tag characters)",
} if {
	lib.request_stage
	input.facts.hidden_text != ""
}

# More requests in the last minute than the server's burst allowance go to
# a person: a loop or an attack looks like this, a real user rarely does.
review contains {
	"code": "burst",
	"message": $"server {input.server.name} sent {input.usage.minute.requests} requests in the minute before this one; its burst allowance is {burst}",
} if {
	lib.request_stage
	burst := budget.burst_per_minute
	input.usage.minute.requests >= burst
}

# budget is this server's budget in the mcpx-fw configuration.
budget := data.mcpxfw.config.servers[input.server.name].budget
