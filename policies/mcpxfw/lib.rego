# Package mcpxfw.lib holds helpers shared by the fallback and the per-server
# packages, so every package recognises secrets, kinds and stages the same
# way.
package mcpxfw.lib

# sampling is true for a sampling request: the upstream asks the user's
# model for a completion. Every rule about prompts, tools, tokens and
# completions is scoped to it, so nothing of sampling fires on another
# kind. An input without a kind (written before there were kinds) is a
# sampling request, as mcpx-fw reads a review item without one.
sampling if input.kind == "sampling"

sampling if not input.kind

# elicitation is true when the upstream asks the user for information: a
# form to fill in, or a URL to visit.
elicitation if input.kind == "elicitation"

# roots is true when the upstream asks for the user's roots; the host's
# list is judged at the result stage.
roots if input.kind == "roots"

# form is true for an elicitation asking the user to fill in a form.
form if {
	elicitation
	input.facts.mode == "form"
}

# url_mode is true for an elicitation sending the user to a URL.
url_mode if {
	elicitation
	input.facts.mode == "url"
}

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

# form_asks_secret is true when a form asks for a secret or a credential by
# a field's name, title, description or enum titles, or by its message
# (read as the user reads them: lib.screened_texts, and the field names
# with camelCase split into words). The spec forbids servers to ask for
# those in form mode: a credential goes through URL mode, to the party
# that needs it, never through the client.
form_asks_secret if {
	form
	some text in array.concat(screened_texts, field_words)
	regex.match(form_secret_pattern, text)
}

form_asks_secret if {
	form
	some name in field_words
	regex.match(field_secret_pattern, name)
}

# field_words are the form's field names as words: "userPassword" reads
# "user Password", so the whole-word patterns find it; the names as a
# reader sees them (facts.folded_field_names) too.
field_words := [regex.replace(name, `([a-z0-9])([A-Z])`, "$1 $2") |
	some name in array.concat(input.facts.field_names, input.facts.folded_field_names)
]

# form_secret_pattern matches the words for secrets and credentials a form
# may ask for: passwords and passphrases, keys, access tokens, session
# cookies, payment card numbers and their security codes, social security
# numbers, one-time and recovery codes; case-insensitively and as whole
# words ("_" and "-" separate words, so api_key and card-number match).
form_secret_pattern := `(?i)(^|[^a-z0-9])(pass(words?|wd|phrases?|codes?)|pin[ _-]?(codes?|numbers?)|secrets?|(api|private|secret|ssh|access|signing|encryption|license)[ _-]?keys?|credentials?|(access|auth(entication)?|bearer|refresh|session|api|id)[ _-]?tokens?|session[ _-]?cookies?|client[ _-]?secrets?|(credit|debit|payment)[ _-]?cards?|card[ _-]?(numbers?|no|nums?)|cc[ _-]?(numbers?|num)|cvv2?|cvc2?|csc|security[ _-]?codes?|ssn|social[ _-]?security([ _-]?numbers?)?|one[ _-]?time[ _-]?(pass(words?|codes?)|codes?|pins?)|otp|totp|2fa([ _-]?codes?)?|mfa([ _-]?codes?)?|verification[ _-]?codes?|recovery[ _-]?(codes?|phrases?|keys?)|seed[ _-]?phrases?|mnemonic|iban|routing[ _-]?numbers?)($|[^a-z0-9])`

# field_secret_pattern matches field names too short to say more than what
# they hold: a field named token, pin or cookie asks for one, where a
# message about tokens or cookies need not.
field_secret_pattern := `(?i)(^|[^a-z0-9])(tokens?|pins?|cookies?)($|[^a-z0-9])`

# form_asks_secret_reason is the deny reason for form_asks_secret.
form_asks_secret_reason := {
	"code": "form-asks-secret",
	"message": "the form asks for a password, key, token, card number or other secret; servers must not ask for those in form mode",
}

# secret_in_answer is true when the user's accepted answer carries
# something shaped like a secret, or words about one: the form may have
# talked the user into pasting a credential.
secret_in_answer if {
	some text in answer_texts
	looks_like_secret(text)
}

secret_in_answer if {
	count(input.facts.answer_secret_stems) > 0
	some text in answer_texts
	regex.match(secret_request_pattern, text)
}

# answer_texts are the accepted answer's string values as written, as a
# reader sees them, and what tag characters in them spell.
answer_texts := array.concat(
	array.concat(input.facts.answer_texts, input.facts.answer_folded_texts),
	[t | t := input.facts.answer_hidden_text; t != ""],
)

# secret_in_answer_reason is the review reason for secret_in_answer.
secret_in_answer_reason := {
	"code": "secret-in-answer",
	"message": "the user's answer contains something shaped like a secret, or mentions one",
}

# root_allowed(uri, prefixes) is true when uri is one of prefixes or
# continues one at a path boundary ("file:///repo" covers
# "file:///repo/src", never "file:///repo-secrets"), as mcpx-fw narrows a
# roots list by servers.<name>.roots.allow.
root_allowed(uri, prefixes) if {
	some prefix in prefixes
	prefix != ""
	under_prefix(uri, prefix)
}

under_prefix(uri, prefix) if uri == prefix

under_prefix(uri, prefix) if {
	endswith(prefix, "/")
	startswith(uri, prefix)
}

under_prefix(uri, prefix) if startswith(uri, concat("", [prefix, "/"]))

# control_pattern matches the characters that change how text is drawn
# rather than what it says: C0 controls but tab and line feed, DEL, C1
# controls, and the bidirectional embedding, override and isolate
# characters.
control_pattern := `[\x00-\x08\x0b-\x1f\x7f-\x9f\x{202a}-\x{202e}\x{2066}-\x{2069}]`
