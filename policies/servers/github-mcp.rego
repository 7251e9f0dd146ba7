# Package mcpxfw.servers["github-mcp"] decides for a code-review assistant
# server: it samples the host's model to summarise diffs and draft review
# comments. That work is text in, text out, so media is refused, answers are
# capped, and a system prompt that steers the model towards running tools or
# commands waits for a person: a review comment never needs one. The name
# has a hyphen, so the package name is quoted. It may see the user's roots
# (a repository checkout); it has no reason to ask the user anything, so an
# elicitation falls to the configured default.
package mcpxfw.servers["github-mcp"]

import data.mcpxfw.lib

# max_tokens caps a review comment; a longer answer is not a review comment.
max_tokens := 2048

# short_text_bytes is how much prompt text passes on its own: a large diff
# with its discussion. Anything bigger waits for a person.
short_text_bytes := 32768

# Diffs and comments are text; an image or a recording is not what this
# server should be sending the model.
deny contains {
	"code": "media",
	"message": $"github-mcp may not send {kind} content to the model",
} if {
	lib.sampling
	lib.request_stage
	some kind in input.facts.block_types
	kind in {"image", "audio"}
}

deny contains {
	"code": "too-many-tokens",
	"message": $"maxTokens {input.facts.max_tokens} is over github-mcp's {max_tokens}",
} if {
	lib.sampling
	lib.request_stage
	input.facts.max_tokens > max_tokens
}

# A review comment is text. A completion carrying an image or audio is not
# one, and is withheld rather than passed to the server.
deny contains {
	"code": "media-completion",
	"message": $"the completion holds {block.type} content; github-mcp gets text only",
} if {
	lib.sampling
	lib.result_stage
	some block in lib.blocks(input.result.content)
	block.type in {"image", "audio"}
}

# A system prompt that tells the model to run tools, commands or scripts is
# how a poisoned repository turns a review into an action.
review contains {
	"code": "tool-execution",
	"message": "the system prompt asks the model to run tools or commands",
} if {
	lib.sampling
	lib.request_stage
	prompt := lower(input.request.systemPrompt)
	regex.match(run_verbs, prompt)
	regex.match(runnable_things, prompt)
}

review contains {
	"code": "tools-offered",
	"message": $"the request offers {count(input.facts.tool_names)} tool(s) to the model",
} if {
	lib.sampling
	lib.request_stage
	input.facts.has_tools
}

# run_verbs and runnable_things are matched separately, anywhere in the
# lowered system prompt: two small patterns are far cheaper than one that
# counts the characters between them, and a system prompt is short enough
# for "anywhere" to mean "in the same instructions".
run_verbs := `\b(run|runs|running|execute[sd]?|executing|invoke[sd]?|invoking|call|calls|calling)\b`

runnable_things := `\b(tools?|commands?|shell|scripts?|terminal|bash)\b`

# Short text-only prompts are what a review assistant sends.
permit if {
	lib.sampling
	lib.request_stage
	every kind in input.facts.block_types {
		kind == "text"
	}
	input.facts.text_bytes <= short_text_bytes
}

# Completions pass unless a review rule above holds them.
permit if lib.result_stage

# A roots request passes; the list itself is judged when it comes back.
permit if {
	lib.request_stage
	lib.roots
}
