# Package mcpxfw composes the decision mcpx-fw enforces. It is the only query
# mcpx-fw evaluates, so `opa eval -d policies -i input.json
# data.mcpxfw.decision` shows exactly what the firewall will do.
#
# Reasons come from data.mcpxfw.global (every server) and from the server's
# own package data.mcpxfw.servers[name], or data.mcpxfw.default when the
# server has none. Any deny wins, and so does a configured default of deny
# when no rule decided; then any review, unless a person already approved;
# then an approval or the package's permit; then the configured default.
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
} else := "deny" if {
	undecided
	configured_default == "deny"
} else := "review" if {
	count(review_reasons) > 0
	not approved
} else := "permit" if {
	approved
} else := "permit" if {
	package_permits
} else := configured_default

# own_package is true when the server has a package of its own, that is one
# defining deny, review or permit. Asking for those rules, rather than for
# the package as a whole, evaluates only what the decision needs.
own_package if data.mcpxfw.servers[input.server.name].deny

own_package if data.mcpxfw.servers[input.server.name].review

own_package if data.mcpxfw.servers[input.server.name].permit

# reasons gathers both kinds for listed.
reasons := {"deny": deny_reasons, "review": review_reasons}

deny_reasons contains r if some r in data.mcpxfw.global.deny

deny_reasons contains r if some r in data.mcpxfw.servers[input.server.name].deny

deny_reasons contains r if {
	not own_package
	some r in data.mcpxfw["default"].deny
}

review_reasons contains r if some r in data.mcpxfw.global.review

review_reasons contains r if some r in data.mcpxfw.servers[input.server.name].review

review_reasons contains r if {
	not own_package
	some r in data.mcpxfw["default"].review
}

# package_permits is true when the deciding package says permit, exactly.
package_permits if data.mcpxfw.servers[input.server.name].permit == true

package_permits if {
	not own_package
	data.mcpxfw["default"].permit == true
}

# approved is true once a person approved this request; their approval
# satisfies review reasons but never a deny.
approved if is_object(input.approval)

# configured_default applies when no rule decided; mcpx-fw's configuration
# sets it, and without one nothing passes unseen.
default configured_default := "review"

configured_default := data.mcpxfw.config.default

# undecided is true when no rule decided, so the configured default does.
# An approval satisfies a default of review, as it satisfies any review; a
# default of deny is a deny, which nobody can approve away.
undecided if {
	count(deny_reasons) == 0
	count(review_reasons) == 0
	not package_permits
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
