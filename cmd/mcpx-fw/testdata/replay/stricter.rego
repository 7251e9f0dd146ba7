# A stricter candidate for the replay tests, added to a copy of the shipped
# policies: every form is refused, and a sampling request may ask for at
# most 50 tokens. It lets nothing through that the shipped policies held.
package mcpxfw.global

import data.mcpxfw.lib

deny contains {"code": "replay-no-forms", "message": "forms are refused"} if lib.elicitation

deny contains {"code": "replay-max-50", "message": $"maxTokens {input.facts.max_tokens} is over 50"} if {
	lib.sampling
	lib.request_stage
	input.facts.max_tokens > 50
}
