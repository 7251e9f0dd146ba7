# Package mcpxfw.global holds the rules every server is held to, whatever its
# own package says. Its deny rules apply at both stages: a request that breaks
# them never legitimately reaches the result stage, so re-checking is free.
# The elicitation and roots rules live here too, so a server's own package
# cannot lose them: the spec's rules for forms and URLs hold for every
# server.
package mcpxfw.global

import data.mcpxfw.lib

# Context inclusion hands the upstream text from the host's other sessions
# and servers; mcpx-fw never advertises it, so asking for it is an attack or
# a bug.
deny contains {
	"code": "include-context",
	"message": $"includeContext {input.facts.include_context} is not allowed; only none is",
} if {
	lib.sampling
	input.facts.include_context != "none"
}

# The operator's per-server cap bounds what one request may cost.
deny contains {
	"code": "max-tokens",
	"message": $"maxTokens {input.facts.max_tokens} is above this server's cap of {cap}",
} if {
	lib.sampling
	cap := data.mcpxfw.config.servers[input.server.name].max_tokens
	input.facts.max_tokens > cap
}

# A server with an hourly token budget may not start a request that could
# take it past the budget: tokens already charged this hour (requests that
# arrived in it, completed ones at their prompt plus what they returned,
# ones still in flight at their prompt plus their maxTokens) plus what this
# request may cost, its prompt (estimated_tokens) and its maxTokens.
# Request stage only: a completion was paid for when its request passed,
# and withholding it saves nothing.
deny contains {
	"code": "budget-exhausted",
	"message": $"server {input.server.name} has used {input.usage.hour.tokens} of its {limit} tokens this hour; this request may take {cost} more ({prompt} to read, up to {input.facts.max_tokens} to write)",
} if {
	lib.sampling
	lib.request_stage
	limit := budget.hourly_tokens
	prompt := object.get(input.facts, "estimated_tokens", 0)
	cost := prompt + input.facts.max_tokens
	input.usage.hour.tokens + cost > limit
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
# ASCII they shadow: a way to hand the model instructions no person sees,
# or to put words in a form no user reads. mcpx-fw decodes them into
# facts.hidden_text (emoji flags, which are made of them legitimately,
# excepted) for sampling and elicitation; only their number goes in the
# reason, so the reason itself hides nothing and leaks nothing.
review contains {
	"code": "hidden-text",
	"message": $"the request carries {count(input.facts.hidden_text)} characters of invisible text (Unicode tag characters)",
} if {
	lib.request_stage
	not lib.roots
	input.facts.hidden_text != ""
}

# More requests in the last minute than the server's burst allowance go to
# a person: a loop or an attack looks like this, a real user rarely does.
# Sampling and elicitation requests count alike (input.usage); a roots
# list is neither counted nor held for it.
review contains {
	"code": "burst",
	"message": $"server {input.server.name} sent {input.usage.minute.requests} requests in the minute before this one; its burst allowance is {burst}",
} if {
	lib.request_stage
	not lib.roots
	burst := budget.burst_per_minute
	input.usage.minute.requests >= burst
}

# budget is this server's budget in the mcpx-fw configuration.
budget := data.mcpxfw.config.servers[input.server.name].budget

# Servers must not ask for secrets or credentials in form mode; a form that
# does is refused whatever the user would have typed.
deny contains lib.form_asks_secret_reason if {
	lib.request_stage
	lib.form_asks_secret
}

# A URL the user is sent to travels in the clear unless it is https. The
# reason does not quote the scheme: the upstream wrote it.
deny contains {
	"code": "url-not-https",
	"message": "the URL's scheme is not https; only https is allowed",
} if {
	lib.request_stage
	lib.url_mode
	input.facts.url.scheme != "https"
}

# user:password@host hides the real host from a reader ("bank.com@evil.example")
# or carries a credential; neither belongs in a URL handed to the user.
deny contains {
	"code": "url-userinfo",
	"message": "the URL carries user information (user:password@) before its host",
} if {
	lib.request_stage
	lib.url_mode
	input.facts.url.userinfo
}

# A punycode host is shown as other letters than it is spelt; a person
# should see both forms before the user is sent there.
review contains {
	"code": "url-punycode",
	"message": "the URL's host is an internationalised (punycode) name",
} if {
	lib.request_stage
	lib.url_mode
	input.facts.url.punycode
}

# Letters of several scripts in one label are the mark of a homograph
# ("аpple.com" with a Cyrillic а).
review contains {
	"code": "url-mixed-script",
	"message": "the URL's host mixes letters of different scripts",
} if {
	lib.request_stage
	lib.url_mode
	input.facts.url.mixed_script
}

# Only the hosts the operator listed for this server
# (servers.<name>.elicitation.allowed_hosts) pass on their own; with none
# listed every URL is seen by a person. The reason does not quote the
# host: the review shows it, set apart.
review contains {
	"code": "url-host-not-allowed",
	"message": $"the URL's host is not in server {input.server.name}'s elicitation.allowed_hosts",
} if {
	lib.request_stage
	lib.url_mode
	not allowed_host
}

# allowed_host is true when the URL's host, in ASCII or Unicode form, is
# one the operator listed for this server, compared case-insensitively.
allowed_host if {
	some listed in data.mcpxfw.config.servers[input.server.name].elicitation.allowed_hosts
	lower(listed) in {input.facts.url.host, lower(input.facts.url.unicode_host)}
}

# The user may have pasted a credential into the form; a person sees the
# answer before the upstream does.
review contains lib.secret_in_answer_reason if {
	lib.result_stage
	lib.elicitation
	lib.secret_in_answer
}

# mcpx-fw narrows a roots list to servers.<name>.roots.allow before the
# policy sees it, so a root outside it means that narrowing failed: refuse
# the list rather than hand the server a root it may not see.
deny contains {
	"code": "root-not-allowed",
	"message": $"the roots list holds a root outside server {input.server.name}'s roots.allow",
} if {
	lib.result_stage
	lib.roots
	allow := data.mcpxfw.config.servers[input.server.name].roots.allow
	count(allow) > 0
	some uri in input.facts.root_uris
	not lib.root_allowed(uri, allow)
}

# The host shows a form's texts to the user as they are. Terminal escapes
# (clear the screen, draw "Approve all"), C1 controls and text-direction
# overrides make what the user reads differ from what the text says, so a
# person sees the form first; the review shows them escaped. A prompt is
# read by a model, not drawn for the user, so this holds elicitation only.
review contains {
	"code": "control-characters",
	"message": "the elicitation's texts or field names carry terminal control or text-direction characters",
} if {
	lib.request_stage
	lib.elicitation
	some text in array.concat(input.facts.texts, input.facts.field_names)
	regex.match(lib.control_pattern, text)
}
