# Package mcpxfw composes the decision mcpx-fw enforces. It is the only query
# mcpx-fw evaluates, so `opa eval -d policies -i input.json
# data.mcpxfw.decision` shows exactly what the firewall will do.
#
# Reasons come from data.mcpxfw.global (every server) and from the server's
# own package data.mcpxfw.servers[name], or data.mcpxfw.default when the
# server has none. Any deny wins; then any review, unless a person already
# approved; then an approval or the package's permit; then the configured
# default.
package mcpxfw

# decision is the whole answer: an outcome word and the sorted reasons
# behind it. mcpx-fw treats anything else as "the policy could not decide".
decision := {
	"outcome": outcome,
	"deny": listed("deny"),
	"review": listed("review"),
}

outcome := "deny" if {
	count(deny_reasons) > 0
} else := "review" if {
	count(review_reasons) > 0
	not approved
} else := "permit" if {
	approved
} else := "permit" if {
	server_package.permit == true
} else := configured_default

# server_package is the package deciding for this server: its own, or the
# conservative fallback.
server_package := data.mcpxfw.servers[input.server.name]

server_package := data.mcpxfw["default"] if not data.mcpxfw.servers[input.server.name]

# reasons gathers both kinds for listed.
reasons := {"deny": deny_reasons, "review": review_reasons}

deny_reasons contains r if some r in data.mcpxfw.global.deny

deny_reasons contains r if some r in server_package.deny

review_reasons contains r if some r in data.mcpxfw.global.review

review_reasons contains r if some r in server_package.review

# approved is true once a person approved this request; their approval
# satisfies review reasons but never a deny.
approved if is_object(input.approval)

# configured_default applies when no rule decided; mcpx-fw's configuration
# sets it, and without one nothing passes unseen.
default configured_default := "review"

configured_default := data.mcpxfw.config.default

# undecided is true when the outcome came from the configured default.
undecided if {
	count(deny_reasons) == 0
	count(review_reasons) == 0
	not approved
	not server_package.permit == true
}

# listed gives the sorted reasons of one kind, naming the configured default
# when it decided, so a reviewer always sees why a request was held.
listed(kind) := sort(reasons[kind] | {default_reason}) if {
	undecided
	configured_default == kind
} else := sort(reasons[kind])

default_reason := {
	"code": "default-outcome",
	"message": $"no rule decided; the configured default is {configured_default}",
}
