# Package mcpxfw.baseline holds the checks every server needs, whatever its
# own package says: a prompt asking for secrets and a completion returning
# one go to a person. The composition applies them to every server; a
# server's package relaxes one only by naming its code in a waiver
# (waive contains "asks-for-secrets"), and the decision lists what was
# waived. The rules for forms, URLs and hidden text are in
# data.mcpxfw.global, which no package can waive.
package mcpxfw.baseline

import data.mcpxfw.lib

review contains lib.asks_for_secrets_reason if {
	lib.sampling
	lib.request_stage
	lib.asks_for_secrets
}

# The model may have been talked into leaking a secret it saw elsewhere.
review contains lib.secret_in_completion_reason if {
	lib.sampling
	lib.result_stage
	lib.secret_in_completion
}
