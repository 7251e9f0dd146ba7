# Package mcpxfw.lib holds helpers shared by the fallback and the per-server
# packages, so every package recognises secrets and stages the same way.
package mcpxfw.lib

# request_stage is true while mcpx-fw decides whether the host's model may
# answer; rules about the prompt belong here.
request_stage if input.stage == "request"

# result_stage is true while mcpx-fw decides whether the completion may go
# back to the upstream; rules about the completion belong here.
result_stage if input.stage == "result"

# asks_for_secrets is true when any prompt text (messages, systemPrompt,
# tool_result text) mentions secrets, keys or credentials: a server asking
# the user's model for those is the classic exfiltration attempt.
asks_for_secrets if {
	mentions_secret_words
	some text in screened_texts
	regex.match(secret_request_pattern, text)
}

# screened_texts are the texts keyword rules read: as written, as a reader
# sees them (facts.folded_texts: zero-width characters dropped, look-alike
# and fullwidth letters made ASCII), and what invisible tag characters
# spell (facts.hidden_text). A word hidden from a rule by any of those
# tricks is still in front of the model.
screened_texts := array.concat(array.concat(input.facts.texts, folded_texts), hidden_texts)

folded_texts := object.get(input.facts, "folded_texts", [])

hidden_texts := [input.facts.hidden_text] if input.facts.hidden_text != ""

else := []

# mentions_secret_words is a cheap screen run before the pattern: every word
# the pattern matches contains one of secret_needles, and six substring
# searches over all the text cost far less than a case-folding regex over
# each text (most prompts mention none of them). mcpx-fw runs the screen
# in Go, where it costs a fraction of what it costs here, and lists the
# needles it found in facts.secret_stems; an input without that fact (one
# written by hand) is screened here, the same way.
mentions_secret_words if count(input.facts.secret_stems) > 0

# lower folds the Kelvin sign to k; the long s is the only other letter (?i)
# folds to an ASCII one.
mentions_secret_words if {
	not input.facts.secret_stems
	all_text := replace(lower(concat("\n", screened_texts)), "ſ", "s")
	some needle in secret_needles
	contains(all_text, needle)
}

secret_needles := {"pass", "secret", "key", "credential", "token", "cookie"}

# asks_for_secrets_reason is the review reason for asks_for_secrets, shared so
# every package reports it with the same code.
asks_for_secrets_reason := {
	"code": "asks-for-secrets",
	"message": "the prompt mentions secrets, keys or credentials",
}

# secret_request_pattern matches the words people use for credentials,
# case-insensitively and as whole words, where "_" also separates words so
# OPENAI_API_KEY matches and "secretary" does not.
secret_request_pattern := `(?i)(^|[^a-z0-9])(passwords?|passwd|passphrases?|secrets?|api[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?|credentials?|access[ _-]?tokens?|auth(entication)?[ _-]?tokens?|bearer[ _-]?tokens?|session[ _-]?(cookies?|tokens?)|client[ _-]?secrets?)($|[^a-z0-9])`

# secret_in_completion is true when the completion contains something shaped
# like a real secret; the model may have been talked into leaking one.
secret_in_completion if {
	some text in completion_texts
	looks_like_secret(text)
}

# secret_in_completion_reason is the review reason for secret_in_completion.
secret_in_completion_reason := {
	"code": "secret-in-completion",
	"message": "the completion contains something shaped like a secret",
}

# looks_like_secret matches well-known secret formats, not words about them.
looks_like_secret(text) if {
	some pattern in secret_value_patterns
	regex.match(pattern, text)
}

# secret_value_patterns are formats whose false positives are rare enough to
# justify a person's look: PEM private keys, AWS, GitHub, Slack, OpenAI-style
# and Anthropic-style keys.
secret_value_patterns := {
	`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`,
	`\b(AKIA|ASIA)[0-9A-Z]{16}\b`,
	`\bgh[pousr]_[A-Za-z0-9]{36,}\b`,
	`\bgithub_pat_[A-Za-z0-9_]{40,}\b`,
	`\bxox[abposr]-[A-Za-z0-9-]{10,}\b`,
	`\bsk-(proj-|ant-)?[A-Za-z0-9_-]{20,}\b`,
}

# completion_texts lists the text the upstream would receive: text blocks and
# the JSON of tool_use inputs, whether content is one block or an array.
completion_texts contains block.text if {
	some block in blocks(input.result.content)
	block.type == "text"
}

completion_texts contains json.marshal(block.input) if {
	some block in blocks(input.result.content)
	block.type == "tool_use"
}

# blocks turns MCP content (one block, or an array of blocks since
# 2025-11-25) into an array.
blocks(content) := content if is_array(content)

blocks(content) := [content] if is_object(content)
